package dev.ratelimiter.scenarios;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import dev.ratelimiter.rebalancer.RegionRebalancerApplication;
import dev.ratelimiter.testsupport.RedisServers;
import org.apache.kafka.streams.KafkaStreams;

/**
 * Three regions on one machine: the broker, a Redis per region, the rebalancer in this JVM, and a sample-gateway
 * process per region on its region's Redis (regions share no counters; only the bus joins them). The broker and the
 * rebalancer start while the gateways boot (the gateways' Kafka clients wait for the broker), since booting three
 * gateways on two cores is most of the set-up's time. Ready when every gateway answers its health endpoint and the
 * rebalancer runs; closed in the reverse order of starting.
 */
final class RegionDeployment implements AutoCloseable {

    private final List<AutoCloseable> closeInReverse = new ArrayList<>();
    private final Map<String, Integer> ports = new LinkedHashMap<>();
    private final double startupSeconds;

    RegionDeployment(GlobalLimit limit, Path jar, String upstreamUri, Duration storeTimeout, Path logDir) {
        long started = System.nanoTime();
        startupSeconds = Startup.orClose(this::close, () -> {
            // the ports are chosen here, not by the broker, so that the gateways can be told them before it is up
            int brokerPort = Gateways.freePort();
            int controllerPort = Gateways.freePort();
            String bootstrapServers = "127.0.0.1:" + brokerPort;
            Path stateDir = Files.createTempDirectory("scenario-rebalancer");
            CompletableFuture<RegionBroker> broker = CompletableFuture.supplyAsync(
                    () -> new RegionBroker(brokerPort, controllerPort));
            started((AutoCloseable) () -> broker.join().close());
            started((AutoCloseable) () -> deleteTree(stateDir));
            CompletableFuture<RegionRebalancerApplication> rebalancer = broker.thenApply(
                    ready -> RegionRebalancerApplication.start(limit.rebalancerSettings(bootstrapServers,
                            "scenario-regions", stateDir)));
            started((AutoCloseable) () -> rebalancer.join().close());
            List<String> redisUrls = limit.regions().stream().map(region -> started(RedisServers.start()).url())
                    .toList();
            Gateways gateways = started(new Gateways(jar, limit.regions(), (i, port, management) -> {
                List<String> args = GatewayArguments.processArguments(port, management, redisUrls.get(i), upstreamUri);
                args.addAll(limit.gatewayArguments(limit.regions().get(i), bootstrapServers, storeTimeout));
                return args;
            }, logDir));
            for (int i = 0; i < limit.regions().size(); i++) {
                ports.put(limit.regions().get(i), gateways.ports().get(i));
            }
            awaitRunning(rebalancer.join(), Duration.ofSeconds(60));
            return (System.nanoTime() - started) / 1e9;
        });
    }

    /** Each region's gateway port. */
    Map<String, Integer> ports() {
        return ports;
    }

    /** From the broker's start until every gateway was ready and the rebalancer running. */
    double startupSeconds() {
        return startupSeconds;
    }

    private <T extends AutoCloseable> T started(T resource) {
        closeInReverse.add(resource);
        return resource;
    }

    private static void awaitRunning(RegionRebalancerApplication rebalancer, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (rebalancer.state() != KafkaStreams.State.RUNNING) {
            if (System.nanoTime() > deadline || rebalancer.state() == KafkaStreams.State.ERROR) {
                throw new IllegalStateException("the rebalancer is " + rebalancer.state() + " after " + timeout
                        + ", not RUNNING");
            }
            Pause.millis(100);
        }
    }

    static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    @Override
    public void close() {
        for (int i = closeInReverse.size() - 1; i >= 0; i--) {
            try {
                closeInReverse.get(i).close();
            }
            catch (Exception ex) {
                // closing the rest matters more: a process or a broker left running outlives the run
                System.err.println("closing " + closeInReverse.get(i) + ": " + ex);
            }
        }
        closeInReverse.clear();
    }
}

package dev.ratelimiter.scenarios;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.IntStream;

import dev.ratelimiter.testsupport.LoopbackPorts;
import dev.ratelimiter.testsupport.RedisServer;

/**
 * N sample gateway instances (WebFlux or Server MVC, see {@link Flavour}), each a separate {@code java -jar} process
 * configured by command-line arguments: one limiter's instances sharing one Redis and one upstream, or (the regions
 * scenario) instances with arguments of their own. Started in parallel; ready when every {@code /actuator/health}
 * answers 200.
 */
final class Gateways implements AutoCloseable {

    /** Which limiter the gateways run. */
    enum Mode {
        OFF("limiter off"), SCG("SCG RequestRateLimiter + RedisRateLimiter"), EXACT("ours, exact"),
        LOCAL("ours, local");

        final String label;

        Mode(String label) {
            this.label = label;
        }
    }

    private final List<Process> processes = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();
    private final List<Integer> managementPorts = new ArrayList<>();
    private final Thread shutdownHook = new Thread(this::destroy, "scenario-gateways-shutdown");
    private final long started = System.nanoTime();
    private double startupSeconds;

    /** The command-line arguments of instance {@code index}, given the ports chosen for it. */
    @FunctionalInterface
    interface InstanceArguments {
        List<String> of(int index, int port, int managementPort);
    }

    /**
     * {@code instances} {@code flavour} gateways (from {@code jar}) of one limiter, all on one Redis; ours are checked
     * to run the runner's rules.
     */
    Gateways(Flavour flavour, Path jar, int instances, Mode mode, Limits limits, String redisUrl, String upstreamUri,
            Path logDir) {
        this(jar, IntStream.range(0, instances).mapToObj(i -> mode.name().toLowerCase() + "-" + i).toList(),
                (i, port, management) -> GatewayArguments.of(flavour, mode, limits, port, management, redisUrl,
                        upstreamUri),
                logDir);
        if (mode == Mode.EXACT || mode == Mode.LOCAL) {
            Startup.orClose(this::close, () -> {
                requireRulesInForce(mode == Mode.LOCAL ? "LOCAL" : "EXACT");
                return null;
            });
        }
    }

    /**
     * One gateway per name, each with arguments of its own (its log is {@code gateway-<name>.log}), started in
     * parallel; ready when every one answers its health endpoint.
     */
    Gateways(Path jar, List<String> names, InstanceArguments arguments, Path logDir) {
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        startupSeconds = Startup.orClose(this::close, () -> {
            for (int i = 0; i < names.size(); i++) {
                int port = freePort();
                int management = freePort();
                List<String> command = GatewayArguments.command(jar, arguments.of(i, port, management));
                Path log = logDir.resolve("gateway-" + names.get(i) + ".log");
                Files.createDirectories(logDir);
                processes.add(new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(log.toFile()).start());
                ports.add(port);
                managementPorts.add(management);
            }
            awaitReady(Duration.ofSeconds(120), logDir);
            return (System.nanoTime() - started) / 1e9;
        });
    }

    private void awaitReady(Duration timeout, Path logDir) {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int i = 0; i < processes.size(); i++) {
            while (true) {
                if (!processes.get(i).isAlive()) {
                    throw new IllegalStateException("gateway " + i + " exited with " + processes.get(i).exitValue()
                            + " before it was ready; see its log in " + logDir);
                }
                if (healthy(client, managementPorts.get(i))) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("gateway " + i + " not ready after " + timeout + "; see " + logDir);
                }
                Pause.millis(250);
            }
        }
    }

    /**
     * Reads the rules in force from each instance's {@code /actuator/ratelimit}: a setting the gateway ignored would
     * otherwise measure something else than the table says (it happened: a tier's store-mode was once ignored).
     */
    private void requireRulesInForce(String storeMode) {
        for (int management : managementPorts) {
            String view = managementGet(management, "/actuator/ratelimit");
            int rule = view.indexOf("\"free.default\":");
            int mode = rule < 0 ? -1 : view.indexOf("\"storeMode\":\"", rule);
            String actual = mode < 0 ? "missing" : view.substring(mode + 13, view.indexOf('"', mode + 13));
            if (!storeMode.equals(actual) || view.contains("\"free-hourly\":")) {
                throw new IllegalStateException("gateway on management port " + management + " does not run the "
                        + "runner's rules (free.default storeMode " + actual + ", expected " + storeMode
                        + "; free-hourly must be off): " + view);
            }
        }
    }

    /**
     * Instance {@code i}'s fallback so far: its {@code ratelimit.fallback.time} and {@code ratelimit.fallback.decisions}
     * (every failure mode), from its {@code /actuator/prometheus}; our limiter's gateways only.
     */
    FallbackAllowance.Reading fallbackSoFar(int i) {
        int management = managementPorts.get(i);
        try {
            return FallbackAllowance.Reading.parse(managementGet(management, "/actuator/prometheus"));
        }
        catch (IllegalArgumentException ex) {
            throw new IllegalStateException("gateway on management port " + management + ": " + ex.getMessage(), ex);
        }
    }

    /** The body of a GET of {@code path} on a management port, within five seconds. */
    private static String managementGet(int management, String path) {
        try {
            return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build()
                    .send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management + path))
                            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** Whether instance {@code i} answers its health endpoint (any status) within two seconds. */
    boolean answersHealth(int i) {
        try {
            HttpResponse<Void> response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build()
                    .send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPorts.get(i)
                            + "/actuator/health")).timeout(Duration.ofSeconds(2)).build(),
                            HttpResponse.BodyHandlers.discarding());
            return response.statusCode() > 0;
        }
        catch (IOException ex) {
            return false;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static boolean healthy(HttpClient client, int managementPort) {
        try {
            HttpResponse<Void> response = client.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + managementPort + "/actuator/health"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
            return response.statusCode() == 200;
        }
        catch (IOException ex) {
            return false;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /**
     * {@code instances} gateways of {@code mode} on {@code redis}, restarted first if a scenario left it down and
     * emptied, so that no run starts from another's counters.
     */
    static Gateways startFresh(Flavour flavour, Path jar, int instances, Mode mode, Limits limits, RedisServer redis,
            Upstream upstream, Path out) {
        if (!redis.isRunning()) {
            redis.restart();
        }
        redis.command("FLUSHALL");
        Gateways gateways = new Gateways(flavour, jar, instances, mode, limits, redis.url(), upstream.uri(),
                out.resolve("logs"));
        System.out.printf(Locale.ROOT, "%d %s gateways (%s, store timeout %d ms) ready in %.1f s%n", instances,
                flavour.label, mode.label, limits.storeTimeout().toMillis(), gateways.startupSeconds());
        return gateways;
    }

    /** From the first process started until every instance answered its health endpoint. */
    double startupSeconds() {
        return startupSeconds;
    }

    List<Integer> ports() {
        return ports;
    }

    /** Instance {@code i}'s management port (the actuator, the rules API). */
    int managementPort(int i) {
        return managementPorts.get(i);
    }

    int size() {
        return processes.size();
    }

    boolean allAlive() {
        return processes.stream().allMatch(Process::isAlive);
    }

    private void destroy() {
        for (Process process : processes) {
            process.destroy();
        }
        for (Process process : processes) {
            try {
                if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
                }
            }
            catch (InterruptedException ex) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        destroy();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        }
        catch (IllegalStateException ex) {
            // shutting down already
        }
    }

    static int freePort() {
        return LoopbackPorts.free();
    }
}

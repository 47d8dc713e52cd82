package dev.ratelimiter.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;
import dev.ratelimiter.testsupport.StubUpstream;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * The whole path under load: a gateway configured like the sample (one route to a fast stub upstream, a token bucket
 * per API key), run three times in one process — limiter off, exact mode, local mode — against the same real Redis
 * and stub, each driven by Reactor Netty's HTTP client at a fixed concurrency. Prints requests per second and p99,
 * and each mode's throughput as a share of the limiter-off run (ratios are what matter on a shared machine).
 */
public final class GatewayLoadRun {

    /** One mode's result. */
    record Result(String mode, double requestsPerSecond, double p99Millis, long allowed, long refused, long failed) {

        Result withMode(String name) {
            return new Result(name, requestsPerSecond, p99Millis, allowed, refused, failed);
        }
    }

    private GatewayLoadRun() {
    }

    /**
     * Runs the three modes {@code rounds} times in turn and keeps the last round: the JVM (one process for the client,
     * the gateway and the stub) keeps compiling through the first round, which would otherwise favour whichever mode
     * runs last.
     */
    public static List<Result> run(Duration warmup, Duration measure, int concurrency, int rounds) {
        List<Result> results = new ArrayList<>();
        try (RedisServer redis = RedisServers.start(); StubUpstream upstream = StubUpstream.start()) {
            for (int round = 0; round < rounds; round++) {
                results.clear();
                runRound(warmup, measure, concurrency, redis, upstream, results);
            }
        }
        return results;
    }

    private static void runRound(Duration warmup, Duration measure, int concurrency, RedisServer redis,
            StubUpstream upstream, List<Result> results) {
        {
            for (String mode : List.of("off", "exact", "local")) {
                try (ConfigurableApplicationContext gateway = start(mode, redis, upstream)) {
                    int port = Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port"));
                    drive(port, warmup, concurrency);
                    results.add(drive(port, measure, concurrency).withMode(mode));
                }
            }
        }
    }

    public static void print(List<Result> results) {
        double off = results.get(0).requestsPerSecond();
        System.out.println("| limiter | requests/s | p99 (ms) | of limiter-off throughput | allowed | refused (429) "
                + "| failed or timed out |");
        System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (Result result : results) {
            System.out.println(String.format(Locale.ROOT, "| %s | %.0f | %.2f | %.0f %% | %d | %d | %d |",
                    result.mode(), result.requestsPerSecond(), result.p99Millis(),
                    100 * result.requestsPerSecond() / off, result.allowed(), result.refused(), result.failed()));
        }
    }

    private static ConfigurableApplicationContext start(String mode, RedisServer redis, StubUpstream upstream) {
        List<String> properties = new ArrayList<>(List.of("server.port=0",
                "logging.level.root=WARN",
                "spring.main.banner-mode=off",
                "spring.data.redis.url=" + redis.url(),
                "spring.cloud.gateway.server.webflux.routes[0].id=api",
                "spring.cloud.gateway.server.webflux.routes[0].uri=" + upstream.uri(),
                "spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/api/**",
                "ratelimit.enabled=" + !"off".equals(mode),
                "ratelimit.store.type=redis",
                "ratelimit.default-tier=free",
                // the load's keys are listed nowhere: clients of the default tier, each with its own buckets
                "ratelimit.api-key.unknown.policy=default-tier",
                // Roomy per-key buckets: the run measures the cost of deciding, not of refusing.
                "ratelimit.rules.per-key.capacity=100000",
                "ratelimit.rules.per-key.refill-tokens=100000",
                "ratelimit.rules.per-key.store-mode=" + ("local".equals(mode) ? "local" : "exact")));
        return new SpringApplicationBuilder(LoadGateway.class).properties(properties.toArray(String[]::new)).run();
    }

    /** Sends requests from {@code concurrency} loops for {@code duration}, each waiting for its answer. */
    private static Result drive(int port, Duration duration, int concurrency) {
        ConnectionProvider pool = ConnectionProvider.builder("load").maxConnections(concurrency).build();
        HttpClient client = HttpClient.create(pool).baseUrl("http://127.0.0.1:" + port);
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        AtomicLong allowed = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicLong key = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        long end = System.nanoTime() + duration.toNanos();
        long start = System.nanoTime();
        Flux.range(0, concurrency)
                .flatMap(loop -> Mono.defer(() -> {
                    long sent = System.nanoTime();
                    return client.headers(h -> h.set("X-API-Key", "client-" + key.incrementAndGet() % 1_000))
                            .get().uri("/api/load")
                            .responseSingle((response, body) -> body.then(Mono.just(response.status().code())))
                            .timeout(Duration.ofSeconds(5))
                            .onErrorReturn(599)
                            .doOnNext(status -> {
                                latencies.add(System.nanoTime() - sent);
                                (status == 200 ? allowed : status == 429 ? refused : failures).incrementAndGet();
                            });
                }).repeat(() -> System.nanoTime() < end), concurrency)
                .then()
                .block(duration.plusSeconds(30));
        double seconds = (System.nanoTime() - start) / 1e9;
        pool.disposeLater().block(Duration.ofSeconds(5));
        List<Long> sorted = new ArrayList<>(latencies);
        Collections.sort(sorted);
        double p99 = sorted.isEmpty() ? Double.NaN : sorted.get((int) Math.ceil(sorted.size() * 0.99) - 1) / 1e6;
        return new Result("", sorted.size() / seconds, p99, allowed.get(), refused.get(), failures.get());
    }

    /** A bare gateway: routes and limits come from properties, the limiter from auto-configuration. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class LoadGateway {
    }
}

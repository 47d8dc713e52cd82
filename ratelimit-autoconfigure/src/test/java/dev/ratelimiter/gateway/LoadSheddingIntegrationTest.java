package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Priority load shedding through the gateway: an upstream at capacity with a mix of background and user-facing
 * traffic sheds background first, and user-facing requests keep succeeding.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class LoadSheddingIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    WebClient client;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("ratelimit.store.timeout", () -> "2s");
        fixture.route(registry, 0, "user", "/user/**");
        registry.add("spring.cloud.gateway.server.webflux.routes[0].metadata.ratelimit-priority", () -> "critical");
        fixture.route(registry, 1, "batch", "/batch/**");
        registry.add("spring.cloud.gateway.server.webflux.routes[1].metadata.ratelimit-priority", () -> "background");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "1000000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1000000");
        // One upstream behind both routes, 20 requests in progress at most.
        registry.add("ratelimit.shedding.upstreams.shared.route-ids[0]", () -> "user");
        registry.add("ratelimit.shedding.upstreams.shared.route-ids[1]", () -> "batch");
        registry.add("ratelimit.shedding.upstreams.shared.max-in-flight", () -> "20");
    }

    @BeforeEach
    void reset() {
        upstream.reset();
        upstream.delay(Duration.ofMillis(100));
        client = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
    }

    @Test
    void backgroundIsShedFirstWhileUserFacingRequestsKeepSucceeding() {
        Map<String, Map<Integer, AtomicLong>> light = run(5, 40, Duration.ofSeconds(3));
        Map<String, Map<Integer, AtomicLong>> heavy = run(15, 40, Duration.ofSeconds(3));

        assertThat(upstream.maxInFlight()).as("the upstream never had more than its limit in progress")
                .isLessThanOrEqualTo(20);
        assertThat(successRate(light.get("user"))).as("user-facing success, 5 users + 40 batch workers")
                .isGreaterThanOrEqualTo(0.99);
        assertThat(successRate(heavy.get("user"))).as("user-facing success, 15 users + 40 batch workers")
                .isGreaterThanOrEqualTo(0.99);
        double lightShed = 1 - successRate(light.get("batch"));
        double heavyShed = 1 - successRate(heavy.get("batch"));
        System.out.printf("Shedding, limit 20: 5 users -> user success %.4f, background shed %.3f; 15 users -> user "
                + "success %.4f, background shed %.3f (%s / %s)%n", successRate(light.get("user")), lightShed,
                successRate(heavy.get("user")), heavyShed, light, heavy);
        assertThat(lightShed).as("background shed with the upstream full").isGreaterThan(0.5);
        assertThat(heavyShed).as("more user-facing work leaves less room for background").isGreaterThan(lightShed);
        assertThat(meters.get("ratelimit.shed").tag("upstream", "shared").tag("priority", "background")
                .functionCounter().count()).as("shed requests are counted per priority")
                .isGreaterThanOrEqualTo(count(light.get("batch"), 503) + count(heavy.get("batch"), 503));
    }

    @Test
    void aShedRequestIsA503WithRetryAfterAndAProblemBody() {
        upstream.delay(Duration.ofSeconds(1));
        // 18 user-facing requests in progress: 90 % of the limit, past where background is fully shed.
        var holding = Flux.range(0, 18).flatMap(i -> status("/user/hold", "holder"), 18).subscribe();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (upstream.inFlight() < 18 && System.nanoTime() < deadline) {
                Load.sleep(Duration.ofMillis(10));
            }
            client.get().uri("/batch/job").header("X-API-Key", "batcher").exchangeToMono(response -> {
                assertThat(response.statusCode().value()).isEqualTo(503);
                assertThat(response.headers().asHttpHeaders().getFirst("Retry-After")).isEqualTo("1");
                return response.bodyToMono(String.class);
            }).doOnNext(body -> assertThat(body).contains("\"error\":\"overloaded\"")
                    .contains("\"priority\":\"background\"").contains("\"upstream\":\"shared\""))
                    .block(Duration.ofSeconds(5));
            assertThat(status("/user/now", "person").block(Duration.ofSeconds(5)))
                    .as("a user-facing request still fits").isEqualTo(200);
        }
        finally {
            holding.dispose();
        }
    }

    /**
     * Closed-loop workers on both routes for {@code duration}: statuses by route, of requests started after the
     * first second. Background already in progress when user-facing traffic grows cannot be taken back; it
     * drains within one upstream latency, and that transition is left out of the steady-state figures.
     */
    private Map<String, Map<Integer, AtomicLong>> run(int users, int batchWorkers, Duration duration) {
        Map<String, Map<Integer, AtomicLong>> statuses = new ConcurrentHashMap<>();
        long start = System.nanoTime();
        long countFrom = start + Duration.ofSeconds(1).toNanos();
        long deadline = start + duration.toNanos();
        Flux<Integer> user = Flux.range(0, users).flatMap(i -> loop("/user/page", "user-" + i, countFrom, deadline),
                users);
        Flux<Integer> batch = Flux.range(0, batchWorkers)
                .flatMap(i -> loop("/batch/export", "batch-" + i, countFrom, deadline), batchWorkers);
        Flux.merge(user.map(status -> record(statuses, "user", status)),
                batch.map(status -> record(statuses, "batch", status)))
                .blockLast(duration.plusSeconds(30));
        return statuses;
    }

    /** Statuses of requests started from {@code countFromNanos} on; earlier ones as -1 (not counted). */
    private Flux<Integer> loop(String path, String apiKey, long countFromNanos, long deadlineNanos) {
        return Mono.defer(() -> {
            boolean counted = System.nanoTime() >= countFromNanos;
            return status(path, apiKey)
                    // A shed worker backs off, as a client honouring Retry-After would (scaled down).
                    .flatMap(status -> status == 503 ? Mono.delay(Duration.ofMillis(50)).thenReturn(status)
                            : Mono.just(status))
                    .map(status -> counted ? status : -1);
        }).repeat(() -> System.nanoTime() < deadlineNanos).filter(status -> status > 0);
    }

    private Mono<Integer> status(String path, String apiKey) {
        return client.get().uri(path).header("X-API-Key", apiKey)
                .exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value()));
    }

    private static int record(Map<String, Map<Integer, AtomicLong>> statuses, String route, int status) {
        statuses.computeIfAbsent(route, r -> new ConcurrentHashMap<>())
                .computeIfAbsent(status, s -> new AtomicLong()).incrementAndGet();
        return status;
    }

    private static double successRate(Map<Integer, AtomicLong> statuses) {
        long total = statuses.values().stream().mapToLong(AtomicLong::get).sum();
        return total == 0 ? 0 : (double) count(statuses, 200) / total;
    }

    private static long count(Map<Integer, AtomicLong> statuses, int status) {
        AtomicLong count = statuses == null ? null : statuses.get(status);
        return count == null ? 0 : count.get();
    }
}

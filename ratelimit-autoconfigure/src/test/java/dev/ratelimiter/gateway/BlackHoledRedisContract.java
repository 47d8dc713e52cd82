package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.testsupport.BlackHole;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway started while its Redis is black-holed: every request must still be decided at once, from the fallback,
 * with no event loop waiting on a connection attempt (BlockHound watches every thread of the test). Before, the first
 * store call on each request opened the shared connection synchronously on the event loop: 1 to 3 s per request.
 */
abstract class BlackHoledRedisContract {

    @LocalServerPort
    int port;

    @Autowired
    RateLimitStore store;

    /** The upstream of the subclass's gateway. */
    abstract StubUpstream upstream();

    static void properties(DynamicPropertyRegistry registry, BlackHole hole, StubUpstream upstream) {
        registry.add("spring.data.redis.url", hole::url);
        // What a blocking connect would cost every request: the connect timeout.
        registry.add("spring.data.redis.connect-timeout", () -> "2s");
        registry.add("ratelimit.store.type", () -> "redis");
        registry.add("ratelimit.store.startup-probe-timeout", () -> "300ms");
        TestRoutes.route(registry, 0, "api", "/api/**", upstream::uri);
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "1000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1000");
        registry.add("ratelimit.rules.reports.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.reports.max-in-progress", () -> "10");
        // A fleet of four: an instance that never saw Redis must not count itself alone.
        registry.add("ratelimit.store.expected-instances", () -> "4");
        TestRoutes.route(registry, 1, "fleet", "/fleet/**", upstream::uri);
        registry.add("ratelimit.rules.fleet-cap.group", () -> "tier-default");
        registry.add("ratelimit.rules.fleet-cap.match.route-ids[0]", () -> "fleet");
        registry.add("ratelimit.rules.fleet-cap.capacity", () -> "8");
        registry.add("ratelimit.rules.fleet-cap.refill-tokens", () -> "1");
        registry.add("ratelimit.rules.fleet-cap.refill-period", () -> "1h");
    }

    @Test
    void anInstanceThatNeverReachedRedisTakesTheFairShareOfTheExpectedFleet() {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(10)).build();
        int allowed = 0;
        for (int i = 0; i < 10; i++) {
            allowed += client.get().uri("/fleet/x").header("X-API-Key", "fleet-client").exchange().expectBody()
                    .returnResult().getStatus().value() == 200 ? 1 : 0;
        }
        assertThat(allowed).as("8 / 4 expected instances, not the whole limit of 8").isEqualTo(2);
    }

    @Test
    void everyRequestIsDecidedAtOnceFromTheFallbackAndNoEventLoopWaits() {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(10)).build();
        // The first request of a fresh gateway pays for class loading, whatever Redis does.
        client.get().uri("/api/warm-up").header("X-API-Key", "warm-up").exchange().expectStatus().isOk();
        List<Long> millis = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            long start = System.nanoTime();
            int status = client.get().uri("/api/x").header("X-API-Key", "client-" + (i % 4)).exchange()
                    .expectBody().returnResult().getStatus().value();
            millis.add((System.nanoTime() - start) / 1_000_000);
            assertThat(status).isEqualTo(200);
        }
        List<Long> sorted = millis.stream().sorted().toList();
        System.out.printf("%s: 40 requests with Redis black-holed, median %d ms, max %d ms%n",
                getClass().getSimpleName(), sorted.get(20), sorted.get(39));
        // Not a benchmark: the bound is the connect timeout a blocking connect would have cost each request.
        assertThat(sorted.get(39)).as("slowest request, ms").isLessThan(1_000);
        assertThat(store.find(FailSafeStore.class).orElseThrow().fallbackDecisions()).isGreaterThanOrEqualTo(41);
        assertThat(upstream().hits("/api/x")).isEqualTo(40);
    }
}

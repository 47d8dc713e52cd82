package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.testsupport.LatencyProxy;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 20 ms of network between the gateway and Redis, against a 5 ms store timeout: decisions fall back instead of
 * waiting, and the breaker stops the calls.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SlowRedisIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    static LatencyProxy proxy;

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.url", () -> {
            if (proxy == null) {
                proxy = new LatencyProxy(redis.host(), redis.port(), Duration.ofMillis(20));
            }
            return proxy.url();
        });
        registry.add("management.endpoints.web.exposure.include", () -> "health");
        registry.add("management.endpoint.health.show-details", () -> "always");
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.store.type", () -> "redis");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "20");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "20");
    }

    @AfterAll
    static void stop() {
        upstream.close();
        proxy.close();
    }

    @Test
    void decisionsFallBackInsteadOfWaitingForASlowRedis() {
        Load.run(port, "/api/warm", Map.of("warm", Duration.ofMillis(20)), Duration.ofSeconds(1));
        List<Load.Result> results = Load.run(port, "/api/slow", Map.of("a", Duration.ofMillis(50),
                "b", Duration.ofMillis(50)), Duration.ofSeconds(3));
        assertThat(results).hasSizeGreaterThan(100).allSatisfy(r -> assertThat(r.status()).isEqualTo(200));
        System.out.printf("With 20 ms to Redis and a 5 ms timeout: p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d "
                + "requests%n", Load.p50Millis(results), Load.p99Millis(results), Load.maxMillis(results),
                results.size());
        // A limiter that waited would add the 20 ms round trip to every request, the median included.
        assertThat(Load.p50Millis(results)).as("requests do not wait the 20 ms round trip").isLessThan(20);
        WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build()
                .get().uri("/actuator/health/rateLimit").exchange().expectStatus().isOk()
                .expectBody()
                .jsonPath("$.details.breaker").isEqualTo("OPEN")
                .jsonPath("$.details.fallbackDecisions").value(count -> assertThat((Integer) count).isGreaterThan(100));
    }
}

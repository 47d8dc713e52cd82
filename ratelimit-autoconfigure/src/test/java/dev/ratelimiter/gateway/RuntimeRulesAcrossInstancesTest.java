package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.Map;

import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateway instances sharing one Redis: a limit raised through one instance's endpoint is in force on both within
 * 30 seconds, for that customer only; with the rule store gone, each keeps its last good rules.
 */
class RuntimeRulesAcrossInstancesTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTests();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();
    static ConfigurableApplicationContext first;
    static ConfigurableApplicationContext second;

    @BeforeAll
    static void startTwoInstances() {
        first = start();
        second = start();
    }

    @AfterAll
    static void stop() {
        first.close();
        second.close();
        upstream.close();
    }

    @Test
    void aRaisedCustomerLimitReachesEveryInstanceAndNobodyElseAndOutlivesTheStore() throws Exception {
        WebTestClient a = GatewayInstance.client(first);
        WebTestClient b = GatewayInstance.client(second);
        assertThat(limitSeenBy(b, "acme-key")).isEqualTo("5");

        a.post().uri("/actuator/ratelimit/acme-boost").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("group", "tier-default", "matchApiKeys", "acme-key", "capacity", 20,
                        "refillTokens", 20, "refillPeriod", "1h"))
                .exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$.version").isEqualTo(1);

        long start = System.nanoTime();
        String seen = limitSeenBy(b, "acme-key");
        while (!"20".equals(seen) && System.nanoTime() - start < Duration.ofSeconds(30).toNanos()) {
            Thread.sleep(100);
            seen = limitSeenBy(b, "acme-key");
        }
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        System.out.println("Runtime rule change reached the second instance in " + tookMillis + " ms");
        assertThat(seen).as("the second instance applies the override within 30 s").isEqualTo("20");
        assertThat(limitSeenBy(a, "acme-key")).isEqualTo("20");
        assertThat(limitSeenBy(b, "globex-key")).as("nobody else's limit changed").isEqualTo("5");

        redis.server().kill();
        start = System.nanoTime();
        String state = ruleStoreState(b);
        while (!"STORE_UNREACHABLE".equals(state) && System.nanoTime() - start < Duration.ofSeconds(10).toNanos()) {
            Thread.sleep(200);
            state = ruleStoreState(b);
        }
        assertThat(state).isEqualTo("STORE_UNREACHABLE");
        // The limiter's own component; Spring Data Redis's component is the failure-policy issue's to tame.
        b.get().uri("/actuator/health/rateLimit").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.status").isEqualTo("UP")
                .jsonPath("$.details.rulesStale").isEqualTo(true);
        assertThat(limitSeenBy(b, "acme-key")).as("the last good rules stay in force").isEqualTo("20");
        redis.server().restart();
    }

    private static String limitSeenBy(WebTestClient client, String apiKey) {
        return client.get().uri("/api/x").header("X-API-Key", apiKey).exchange().returnResult(String.class)
                .getResponseHeaders().getFirst("X-RateLimit-Limit");
    }

    private static String ruleStoreState(WebTestClient client) {
        Map<?, ?> body = client.get().uri("/actuator/ratelimit").exchange().expectBody(Map.class).returnResult()
                .getResponseBody();
        return String.valueOf(((Map<?, ?>) body.get("ruleStore")).get("state"));
    }

    private static ConfigurableApplicationContext start() {
        return GatewayInstance.start(redis.url(), upstream.uri(),
                "management.endpoints.web.exposure.include=health,ratelimit",
                "management.endpoint.health.show-details=always",
                "ratelimit.store.type=redis",
                "ratelimit.store.timeout=1s",
                "ratelimit.rule-store.poll-interval=1s",
                "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=5",
                "ratelimit.tiers.free.limits.default.refill-tokens=5",
                "ratelimit.tiers.free.limits.default.refill-period=1h");
    }
}

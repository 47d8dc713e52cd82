package dev.ratelimiter.gateway;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import dev.ratelimiter.testsupport.RawResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /ratelimit/me} switched on, on a real gateway with real Redis: the caller reads its own buckets, found
 * from its API key header as the limiter finds it; reading spends nothing from them; no parameter names another
 * client; a caller without an identity, or with a key the gateway refuses, gets the refusal a routed request gets.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class CallerUsageIntegrationTest {

    static final String KEY = "caller-usage-key-0001";
    static final String OTHER = "caller-usage-key-0002";

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEach();

    @LocalServerPort
    int port;

    @Autowired
    ConfigurableApplicationContext context;

    private final JsonMapper json = JsonMapper.builder().build();

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.usage.me.enabled", () -> "true");
        registry.add("ratelimit.store.type", () -> "redis");
        registry.add("ratelimit.store.timeout", () -> "1s");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.api-key.min-length", () -> "8");
        registry.add("ratelimit.api-key.max-length", () -> "256");
        registry.add("ratelimit.api-key.pattern", () -> "[A-Za-z0-9._~+/=-]+");
        registry.add("ratelimit.tiers.free.api-keys[0]", () -> KEY);
        registry.add("ratelimit.tiers.free.api-keys[1]", () -> OTHER);
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "10");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "10");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
    }

    @BeforeEach
    void redis() {
        GatewayInstance.awaitRedis(context);
    }

    @Test
    void theCallerReadsItsOwnBucketsWithoutSpending() throws Exception {
        for (int i = 0; i < 2; i++) {
            assertThat(RawResponse.send(port, "GET", "/api/x", null, new byte[0], "X-API-Key: " + KEY).status())
                    .isEqualTo(200);
        }
        for (int i = 0; i < 3; i++) {
            RawResponse me = RawResponse.send(port, "GET", "/ratelimit/me", null, new byte[0], "X-API-Key: " + KEY);
            assertThat(me.status()).as(me.body()).isEqualTo(200);
            assertThat(me.body()).doesNotContain(KEY);
            JsonNode body = json.readTree(me.body());
            assertThat(body.get("tier").asString()).isEqualTo("free");
            assertThat(body.get("rules").get(0).get("id").asString()).isEqualTo("free.default");
            assertThat(body.get("rules").get(0).get("remaining").asLong()).isEqualTo(8);
        }
        JsonNode other = json.readTree(RawResponse.send(port, "GET", "/ratelimit/me", null, new byte[0],
                "X-API-Key: " + OTHER).body());
        assertThat(other.get("rules").get(0).get("remaining").asLong()).isEqualTo(10);
        // the readings spent nothing: the next request leaves 7
        RawResponse spent = RawResponse.send(port, "GET", "/api/x", null, new byte[0], "X-API-Key: " + KEY);
        assertThat(spent.headers().get("ratelimit")).contains("r=7");
    }

    @Test
    void noParameterNamesAnotherClientAndAnAnonymousCallerIsRefused() throws IOException {
        RawResponse naming = RawResponse.send(port, "GET", "/ratelimit/me?apiKey=" + OTHER, null, new byte[0],
                "X-API-Key: " + KEY);
        assertThat(naming.status()).isEqualTo(400);
        assertThat(RawResponse.send(port, "GET", "/ratelimit/me?client=AAAAAAAAAAAAAAAAAAAAAA", null, new byte[0],
                "X-API-Key: " + KEY).status()).isEqualTo(400);
        RawResponse anonymous = RawResponse.send(port, "GET", "/ratelimit/me", null, new byte[0]);
        assertThat(anonymous.status()).as(anonymous.body()).isEqualTo(401);
        RawResponse malformed = RawResponse.send(port, "GET", "/ratelimit/me", null, new byte[0], "X-API-Key: a b");
        assertThat(malformed.status()).isEqualTo(400);
        RawResponse written = RawResponse.send(port, "POST", "/ratelimit/me", "application/json",
                "{}".getBytes(StandardCharsets.UTF_8), "X-API-Key: " + KEY);
        assertThat(written.status()).isEqualTo(405);
    }

    @Test
    void pollingInALoopIsAnsweredWithAReadingOrA429NeverAnError() throws IOException {
        for (int i = 0; i < 30; i++) {
            RawResponse me = RawResponse.send(port, "GET", "/ratelimit/me", null, new byte[0], "X-API-Key: " + KEY);
            assertThat(me.status()).as(me.body()).isIn(200, 429);
            if (me.status() == 429) {
                assertThat(me.headers().get("retry-after")).isEqualTo("1");
            }
        }
    }
}

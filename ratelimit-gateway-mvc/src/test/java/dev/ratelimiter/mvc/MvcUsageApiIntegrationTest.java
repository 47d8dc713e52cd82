package dev.ratelimiter.mvc;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.testsupport.RawResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The usage API on the MVC flavour, on its management port with the operator accounts, on real Redis: what requests
 * spent is what it reads, reading spends nothing, the viewer may read and nobody else, a malformed query is a 400
 * problem and a Redis that does not answer a 503 problem.
 */
@DirtiesContext
@SpringBootTest(classes = TestMvcGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcUsageApiIntegrationTest {

    static final String KEY = "mvc-usage-key-0001";
    static final String VIEWER = "Authorization: Basic " + Base64.getEncoder()
            .encodeToString("ratelimit-viewer:viewer-secret-0123".getBytes(StandardCharsets.UTF_8));

    @RegisterExtension
    static final MvcGatewayFixture fixture = new MvcGatewayFixture();

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    @Autowired
    ConfigurableApplicationContext context;

    private final JsonMapper json = JsonMapper.builder().build();

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.store.timeout", () -> "1s");
        registry.add("management.server.port", () -> "0");
        registry.add("management.server.address", () -> "127.0.0.1");
        registry.add("management.endpoints.web.exposure.include", () -> "health,ratelimit");
        registry.add("ratelimit.management.security.enabled", () -> "true");
        registry.add("ratelimit.management.security.admin.password", () -> "admin-secret-0123");
        registry.add("ratelimit.management.security.viewer.password", () -> "viewer-secret-0123");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.usage.me.enabled", () -> "true");
        registry.add("ratelimit.tiers.free.api-keys[0]", () -> KEY);
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "10");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "10");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
    }

    @BeforeEach
    void redis() throws InterruptedException {
        LimiterConnection connection = context.getBean(LimiterConnection.class);
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!connection.connected() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(connection.connected()).isTrue();
    }

    @Test
    void spendingNRequestsLeavesTheLimitLessNAndReadingSpendsNothing() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(RawResponse.send(port, "GET", "/api/x", null, new byte[0], "X-API-Key: " + KEY).status())
                    .isEqualTo(200);
        }
        for (int i = 0; i < 20; i++) {
            RawResponse answer = usage("apiKey=" + KEY, VIEWER);
            assertThat(answer.status()).as(answer.body()).isEqualTo(200);
            assertThat(answer.body()).doesNotContain(KEY);
            JsonNode rule = json.readTree(answer.body()).get("rules").get(0);
            assertThat(rule.get("id").asString()).isEqualTo("free.default");
            assertThat(rule.get("remaining").asLong()).isEqualTo(7);
            assertThat(rule.get("resetSeconds").asLong()).isBetween(1_000L, 1_080L);
        }
        RawResponse spent = RawResponse.send(port, "GET", "/api/x", null, new byte[0], "X-API-Key: " + KEY);
        assertThat(spent.headers().get("ratelimit")).contains("r=6");
    }

    @Test
    void theViewerMayReadNobodyElseAndBadQueriesAre400() throws IOException {
        assertThat(usage("apiKey=" + KEY).status()).isEqualTo(401);
        assertThat(usage("apiKey=" + KEY, "Authorization: Basic " + Base64.getEncoder()
                .encodeToString("ratelimit-viewer:wrong".getBytes(StandardCharsets.UTF_8))).status()).isEqualTo(401);
        assertThat(usage("", VIEWER).status()).isEqualTo(400);
        assertThat(usage("apikey=" + KEY, VIEWER).status()).isEqualTo(400);
        assertThat(usage("apiKey=" + KEY + "&rule=nope", VIEWER).status()).isEqualTo(404);
        assertThat(usage("user=%00", VIEWER).status()).isEqualTo(400);
    }

    @Test
    void theCallerReadsItsOwnUsageOnTheGatewaysPortAndNamesNoOther() throws Exception {
        for (int i = 0; i < 2; i++) {
            assertThat(RawResponse.send(port, "GET", "/api/x", null, new byte[0], "X-API-Key: " + KEY).status())
                    .isEqualTo(200);
        }
        for (int i = 0; i < 3; i++) {
            RawResponse me = RawResponse.send(port, "GET", "/ratelimit/me", null, new byte[0], "X-API-Key: " + KEY);
            assertThat(me.status()).as(me.body()).isEqualTo(200);
            assertThat(me.body()).doesNotContain(KEY);
            assertThat(json.readTree(me.body()).get("rules").get(0).get("remaining").asLong()).isEqualTo(8);
        }
        assertThat(RawResponse.send(port, "GET", "/ratelimit/me?apiKey=other-key-0001", null, new byte[0],
                "X-API-Key: " + KEY).status()).isEqualTo(400);
        assertThat(RawResponse.send(port, "GET", "/ratelimit/me", null, new byte[0]).status()).isEqualTo(401);
        assertThat(RawResponse.send(port, "DELETE", "/ratelimit/me", null, new byte[0], "X-API-Key: " + KEY)
                .status()).isEqualTo(405);
        RawResponse spent = RawResponse.send(port, "GET", "/api/x", null, new byte[0], "X-API-Key: " + KEY);
        assertThat(spent.headers().get("ratelimit")).as("the readings spent nothing").contains("r=7");
    }

    @Test
    void aRedisThatDoesNotAnswerIsA503Problem() throws Exception {
        fixture.redis().server().pause();
        try {
            RawResponse answer = usage("apiKey=" + KEY, VIEWER);
            assertThat(answer.status()).as(answer.body()).isEqualTo(503);
            assertThat(json.readTree(answer.body()).get("error").asString()).isEqualTo("store_unavailable");
        }
        finally {
            fixture.redis().server().resume();
        }
    }

    private RawResponse usage(String query, String... headers) throws IOException {
        return RawResponse.send(managementPort, "GET", "/v1/usage" + (query.isEmpty() ? "" : "?" + query), null,
                new byte[0], headers);
    }
}

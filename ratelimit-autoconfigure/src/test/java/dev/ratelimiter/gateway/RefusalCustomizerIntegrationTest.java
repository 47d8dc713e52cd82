package dev.ratelimiter.gateway;

import java.util.Map;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A user's {@link RateLimitResponseCustomizer} beans on a started gateway with a real Redis: they change the 429 the
 * client gets, and one that throws costs the client only the custom parts, never the refusal.
 */
@DirtiesContext
@SpringBootTest(classes = { TestGatewayApplication.class, RefusalCustomizerIntegrationTest.Customizers.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ExtendWith(OutputCaptureExtension.class)
class RefusalCustomizerIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final StubUpstream upstream = fixture.upstream();
    static final JsonMapper json = JsonMapper.builder().build();

    @LocalServerPort
    int port;

    WebTestClient client;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.store.type", () -> "redis");
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "2");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
    }

    @BeforeEach
    void client() {
        client = GatewayInstance.client(port);
    }

    @Test
    void theUsersCustomizersShapeThe429InTheirOrder() {
        EntityExchangeResult<byte[]> denied = overTheLimit("alice");

        assertThat(denied.getStatus().value()).isEqualTo(429);
        assertThat(denied.getResponseHeaders().getFirst("X-Upgrade")).isEqualTo("https://example.com/pricing");
        assertThat(denied.getResponseHeaders().getFirst("X-Seen-Upgrade")).as("the second saw the first's header")
                .isEqualTo("https://example.com/pricing");
        assertThat(denied.getResponseHeaders().getFirst("Retry-After")).isEqualTo("3600");
        assertThat(denied.getResponseHeaders().getContentLength()).isEqualTo(denied.getResponseBodyContent().length);
        Map<String, Object> body = body(denied);
        assertThat(body).containsEntry("plan", "free").containsEntry("error", "rate_limited")
                .containsEntry("retryAfter", 3600).containsEntry("type", RefusalRenderer.QUOTA_EXCEEDED)
                .containsEntry("violated-policies", java.util.List.of("free.default"));
        assertThat(upstream.hitsForApiKey("alice")).isEqualTo(2);
    }

    @Test
    void aCustomizerMayAnswerWithAnotherStatusAndTheBodySaysTheSame() {
        EntityExchangeResult<byte[]> denied = overTheLimit("unavailable-please");

        assertThat(denied.getStatus().value()).isEqualTo(503);
        assertThat(body(denied)).containsEntry("status", 503).containsEntry("error", "rate_limited");
        assertThat(upstream.hitsForApiKey("unavailable-please")).isEqualTo(2);
    }

    @Test
    void aCustomizerThatThrowsLeavesTheDefault429AndIsLoggedOnce(CapturedOutput output) {
        EntityExchangeResult<byte[]> denied = overTheLimit("breaks-customizer");
        for (int i = 0; i < 5; i++) {
            assertThat(get("breaks-customizer").getStatus().value()).isEqualTo(429);
        }

        assertThat(denied.getStatus().value()).isEqualTo(429);
        assertThat(denied.getResponseHeaders().containsHeader("X-Upgrade")).as("no half-customized answer").isFalse();
        assertThat(denied.getResponseHeaders().getFirst("Retry-After")).isEqualTo("3600");
        assertThat(body(denied)).doesNotContainKey("plan").containsEntry("error", "rate_limited")
                .containsEntry("policy", "free.default");
        assertThat(upstream.hitsForApiKey("breaks-customizer")).isEqualTo(2);
        assertThat(output.getAll().split("A RateLimitResponseCustomizer failed", -1)).as("logged once").hasSize(2);
        assertThat(output.getAll()).contains("customizer bug for breaks-customizer");
    }

    private EntityExchangeResult<byte[]> overTheLimit(String apiKey) {
        for (int i = 0; i < 2; i++) {
            assertThat(get(apiKey).getStatus().value()).isEqualTo(200);
        }
        return get(apiKey);
    }

    private EntityExchangeResult<byte[]> get(String apiKey) {
        return client.get().uri("/api/hello").header("X-API-Key", apiKey).exchange().expectBody().returnResult();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> body(EntityExchangeResult<byte[]> result) {
        return json.readValue(result.getResponseBodyContent(), Map.class);
    }

    @Configuration(proxyBeanMethods = false)
    static class Customizers {

        /** Declared first, runs second: order comes from {@code @Order}, not from declaration. */
        @Bean
        @Order(2)
        RateLimitResponseCustomizer breaksForOneKey() {
            return (refusal, context) -> {
                refusal.getHeaders().set("X-Seen-Upgrade", refusal.getHeaders().getFirst("X-Upgrade"));
                if ("breaks-customizer".equals(context.request().apiKey())) {
                    throw new IllegalStateException("customizer bug for " + context.request().apiKey());
                }
            };
        }

        @Bean
        @Order(1)
        RateLimitResponseCustomizer upgradeHint() {
            return (refusal, context) -> {
                if (context.kind() != Refusal.Kind.RATE_LIMITED) {
                    return;
                }
                refusal.getHeaders().set("X-Upgrade", "https://example.com/pricing");
                refusal.getBody().put("plan", context.request().tier());
                if ("unavailable-please".equals(context.request().apiKey())) {
                    refusal.setStatus(HttpStatus.SERVICE_UNAVAILABLE);
                }
            };
        }
    }
}

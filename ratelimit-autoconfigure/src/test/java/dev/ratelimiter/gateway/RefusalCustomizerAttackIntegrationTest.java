package dev.ratelimiter.gateway;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.server.ServerWebExchange;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Customizers that try to turn a refusal into something else on a started gateway with a real Redis: a pass, a
 * redirect, an Error instead of an exception, a body JSON has no literal for, framing headers. The client always gets
 * an error status with a body that parses and a Content-Length that fits it, never a 500 and never the upstream.
 */
@DirtiesContext
@SpringBootTest(classes = { TestGatewayApplication.class, RefusalCustomizerAttackIntegrationTest.Attacks.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RefusalCustomizerAttackIntegrationTest {

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
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "1");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
    }

    @BeforeEach
    void client() {
        client = GatewayInstance.client(port);
    }

    @Test
    void noCustomizerTurnsA429IntoAPassARedirectOrA500() {
        Map<String, String> answers = new LinkedHashMap<>();
        for (String attack : List.of("ok", "redirect", "informational", "assert", "sneaky", "body", "chunked",
                "content-length", "clear", "null-status")) {
            String key = "key-" + attack;
            assertThat(get(key, attack).getStatus().value()).isEqualTo(200);
            EntityExchangeResult<byte[]> denied = get(key, attack);
            answers.put(attack, check(denied));
            assertThat(upstream.hitsForApiKey(key)).as(attack).isEqualTo(1);
        }
        assertThat(answers).allSatisfy((attack, problem) -> assertThat(problem).as(attack).isEmpty());
    }

    @Test
    void noCustomizerTurnsAnIdentityRefusalIntoA500() {
        Map<String, String> answers = new LinkedHashMap<>();
        for (String attack : List.of("assert", "sneaky", "redirect")) {
            EntityExchangeResult<byte[]> duplicated = client.get().uri("/api/hello").header("X-API-Key", "a", "b")
                    .header("X-Attack", attack).exchange().expectBody().returnResult();
            answers.put(attack, duplicated.getStatus().value() == 400 ? check(duplicated)
                    : "status " + duplicated.getStatus().value());
        }
        assertThat(answers).allSatisfy((attack, problem) -> assertThat(problem).as(attack).isEmpty());
    }

    /** What is wrong with a refusal, or the empty string. */
    private static String check(EntityExchangeResult<byte[]> answer) {
        int status = answer.getStatus().value();
        if (status < 400 || status >= 500) {
            return "status " + status;
        }
        byte[] body = answer.getResponseBodyContent();
        if (body == null || answer.getResponseHeaders().getContentLength() != body.length) {
            return "Content-Length " + answer.getResponseHeaders().getContentLength() + " for "
                    + (body == null ? "no" : body.length) + " bytes";
        }
        try {
            json.readTree(body);
        }
        catch (RuntimeException ex) {
            return "body is no JSON: " + ex.getMessage();
        }
        return answer.getResponseHeaders().containsHeader("Location") ? "a Location header" : "";
    }

    private EntityExchangeResult<byte[]> get(String apiKey, String attack) {
        return client.get().uri("/api/hello").header("X-API-Key", apiKey).header("X-Attack", attack).exchange()
                .expectBody().returnResult();
    }

    @SuppressWarnings("unchecked")
    static <E extends Throwable> void sneakyThrow(Throwable failure) throws E {
        throw (E) failure;
    }

    @Configuration(proxyBeanMethods = false)
    static class Attacks {

        @Bean
        RateLimitResponseCustomizer attacker() {
            return (refusal, context) -> {
                String attack = context.nativeExchange(ServerWebExchange.class).getRequest().getHeaders().getFirst("X-Attack");
                switch (attack == null ? "" : attack) {
                    case "ok" -> refusal.setStatus(HttpStatus.OK);
                    case "redirect" -> {
                        refusal.setStatus(HttpStatus.FOUND);
                        refusal.getHeaders().set("Location", "https://example.com/");
                    }
                    case "informational" -> refusal.setStatus(HttpStatusCode.valueOf(101));
                    case "null-status" -> refusal.setStatus(null);
                    case "assert" -> throw new AssertionError("a customizer's failed assertion");
                    case "sneaky" -> sneakyThrow(new java.io.IOException("a checked exception, thrown sneakily"));
                    case "body" -> {
                        Map<String, Object> body = refusal.getBody();
                        body.put("nan", Double.NaN);
                        body.put("inf", Float.NEGATIVE_INFINITY);
                        body.put("controls", "\u0000\u0001\n\r\t\u007f\u2028\"\\");
                        body.put("surrogates", "\ud800 x \udc00");
                        body.put("nested", Map.of("list", List.of(1, Map.of("k", new Object[] { null, true })),
                                "big", new java.math.BigDecimal("1e400")));
                        body.put(null, "null key");
                        body.put("object", new Object() {
                            @Override
                            public String toString() {
                                return "{\"not\": \"json\"}";
                            }
                        });
                    }
                    case "chunked" -> refusal.getHeaders().set("Transfer-Encoding", "chunked");
                    case "content-length" -> refusal.getHeaders().setContentLength(3);
                    case "clear" -> {
                        refusal.getHeaders().clear();
                        refusal.getBody().clear();
                    }
                    default -> {
                    }
                }
            };
        }
    }
}

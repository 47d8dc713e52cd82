package dev.ratelimiter.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The optional API key format check through the real gateway and Redis: a thousand distinct junk keys (too long, or
 * of characters the format does not allow) are refused with 400 and write nothing to Redis, where before each was a
 * client of the default tier with buckets living two windows.
 */
class ApiKeyFormatIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    @Test
    void keysOutsideTheFormatAreRefusedBeforeAnyStoreCall() {
        try (ConfigurableApplicationContext gateway = GatewayInstance.start(redis.url(), upstream.uri(),
                "ratelimit.store.type=redis", "ratelimit.store.timeout=2s", "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=5", "ratelimit.tiers.free.limits.default.refill-tokens=1",
                "ratelimit.tiers.free.limits.default.refill-period=1h", "ratelimit.api-key.max-length=24",
                "ratelimit.api-key.pattern=[a-z0-9-]{4,}")) {
            WebTestClient client = GatewayInstance.client(gateway);
            redis.command("FLUSHALL");
            Random random = new Random(14);
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                String junk = switch (i % 3) {
                    case 0 -> "k".repeat(25 + random.nextInt(1000)) + i; // too long
                    case 1 -> "Key_" + i + "!"; // characters outside the format
                    default -> "x" + (i % 10); // too short for {4,}
                };
                statuses.add(get(client, junk).getStatus().value());
            }
            assertThat(statuses).as("every junk key refused").containsOnly(400);
            assertThat(redis.command("KEYS", "rl:*:*").trim()).as("nothing written for them").isEmpty();
            assertThat(upstream.hits()).isZero();

            EntityExchangeResult<String> refused = get(client, "NOT-lower-case");
            assertThat(refused.getResponseHeaders().getContentType().toString()).isEqualTo("application/problem+json");
            assertThat(refused.getResponseBody()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Bad Request\","
                    + "\"status\":400,\"detail\":\"The API key in the X-API-Key header is not in the expected "
                    + "format.\",\"error\":\"invalid_api_key\"}");
            assertThat(get(client, "k".repeat(30)).getResponseBody()).contains("is longer than 24 characters");

            assertThat(get(client, "good-key-1").getStatus().value()).isEqualTo(200);
            assertThat(upstream.hits()).isEqualTo(1);
        }
    }

    private static EntityExchangeResult<String> get(WebTestClient client, String apiKey) {
        return client.get().uri("/api/hello").header("X-API-Key", apiKey).exchange().expectBody(String.class)
                .returnResult();
    }
}

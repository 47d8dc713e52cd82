package dev.ratelimiter.gateway;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Caps by tenant and by user through the real gateway and Redis, and requests that leave the header out. Before, they
 * skipped the cap.
 */
class MissingIdentityIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    @Test
    void leavingTheHeaderOutIsRefusedOrSharedNeverUnlimited() {
        try (ConfigurableApplicationContext gateway = GatewayInstance.start(redis.url(), upstream.uri(),
                "ratelimit.store.type=redis", "ratelimit.store.timeout=2s",
                "ratelimit.rules.tenant-cap.key=tenant", "ratelimit.rules.tenant-cap.when-missing=deny",
                "ratelimit.rules.tenant-cap.match.paths=/api/strict/**", "ratelimit.rules.tenant-cap.capacity=100",
                "ratelimit.rules.tenant-cap.refill-tokens=1", "ratelimit.rules.tenant-cap.refill-period=1h",
                "ratelimit.rules.user-cap.key=user", "ratelimit.rules.user-cap.match.paths=/api/shared/**",
                "ratelimit.rules.user-cap.capacity=2", "ratelimit.rules.user-cap.refill-tokens=1",
                "ratelimit.rules.user-cap.refill-period=1h")) {
            WebTestClient client = GatewayInstance.client(gateway);

            EntityExchangeResult<String> refused = client.get().uri("/api/strict/x").header("X-API-Key", "k1")
                    .exchange().expectBody(String.class).returnResult();
            assertThat(refused.getStatus().value()).isEqualTo(400);
            assertThat(refused.getResponseHeaders().getContentType().toString()).isEqualTo("application/problem+json");
            assertThat(refused.getResponseBody()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Bad Request\","
                    + "\"status\":400,\"detail\":\"Limit 'tenant-cap' needs the X-Tenant-Id header, which this request "
                    + "lacks.\",\"error\":\"missing_identity\",\"policy\":\"tenant-cap\"}");
            assertThat(client.get().uri("/api/strict/x").header("X-API-Key", "k1").header("X-Tenant-Id", "t1")
                    .exchange().returnResult(String.class).getStatus().value()).isEqualTo(200);

            List<Integer> anonymous = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                anonymous.add(client.get().uri("/api/shared/x").header("X-API-Key", "key-" + i).exchange()
                        .returnResult(String.class).getStatus().value());
            }
            assertThat(anonymous).as("every request without a user shares one cap of 2").containsExactly(200, 200,
                    429, 429, 429);
            assertThat(client.get().uri("/api/shared/x").header("X-API-Key", "key-0").header("X-User-Id", "u1")
                    .exchange().returnResult(String.class).getStatus().value()).isEqualTo(200);
            assertThat(upstream.hits()).isEqualTo(1 + 2 + 1);

            // here rules read the user and the tenant: each sent twice is refused, naming the header
            for (String header : List.of("X-User-Id", "X-Tenant-Id")) {
                EntityExchangeResult<String> twice = client.get().uri("/api/strict/x").header("X-API-Key", "k1")
                        .headers(headers -> headers.addAll(header, List.of("a", "b"))).exchange()
                        .expectBody(String.class).returnResult();
                assertThat(twice.getStatus().value()).as(header).isEqualTo(400);
                assertThat(twice.getResponseBody()).contains("\"error\":\"duplicate_identity_header\"",
                        "\"header\":\"" + header + "\"");
            }
            assertThat(upstream.hits()).isEqualTo(4);
        }
    }
}

package dev.ratelimiter.gateway;

import java.util.List;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A rule's cost from the request through a started gateway and real Redis: a header's value, clamped to max-cost, the
 * fallback for what is no number (never a 500, never free), and a malformed expression stopping the start-up with a
 * sentence naming the setting.
 */
class CostExpressionIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    static ConfigurableApplicationContext gateway;
    static WebTestClient client;

    @BeforeAll
    static void startGateway() {
        gateway = GatewayInstance.start(fixture.redis().url(), upstream.uri(), "ratelimit.store.type=redis",
                "ratelimit.store.timeout=2s", "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=100000",
                "ratelimit.tiers.free.limits.default.refill-tokens=100000",
                "ratelimit.tiers.free.limits.default.refill-period=1h",
                "ratelimit.rules.batch.match.paths[0]=/api/batch/**", "ratelimit.rules.batch.capacity=100",
                "ratelimit.rules.batch.refill-tokens=100", "ratelimit.rules.batch.refill-period=24h",
                "ratelimit.rules.batch.cost-expression=headers['X-Batch-Size'] ?: query['n']",
                "ratelimit.rules.batch.max-cost=50", "ratelimit.rules.batch.fallback-cost=5",
                "ratelimit.rules.query.match.paths[0]=/api/query/**", "ratelimit.rules.query.capacity=100",
                "ratelimit.rules.query.refill-tokens=100", "ratelimit.rules.query.refill-period=24h",
                "ratelimit.rules.query.cost-expression=headerLengths['X-Query'] / 10 + 1");
        GatewayInstance.awaitRedis(gateway);
        client = GatewayInstance.client(gateway);
    }

    @AfterAll
    static void stopGateway() {
        gateway.close();
    }

    @Test
    void theHeaderOrTheQueryGivesTheCostClampedAndFallingBack() {
        assertThat(remaining(send("/api/batch", "X-Batch-Size", "30"))).isEqualTo(70);
        assertThat(remaining(send("/api/batch?n=7", null, null))).isEqualTo(63);
        assertThat(remaining(send("/api/batch", "X-Batch-Size", "many"))).isEqualTo(58);
        assertThat(remaining(send("/api/batch", "X-Batch-Size", "-3"))).isEqualTo(53);
        assertThat(remaining(send("/api/batch", "X-Batch-Size", "0"))).isEqualTo(52);
        assertThat(remaining(send("/api/batch", "X-Batch-Size", "100000"))).isEqualTo(2);
        EntityExchangeResult<String> refused = send("/api/batch", "X-Batch-Size", "3");
        assertThat(refused.getStatus().value()).isEqualTo(429);
        assertThat(upstream.hits()).isEqualTo(6);
    }

    @Test
    void aHeadersLengthGivesTheCost() {
        assertThat(remaining(send("/api/query", "X-Query", "q".repeat(45)))).isEqualTo(95);
        assertThat(remaining(send("/api/query", null, null))).isEqualTo(94);
    }

    @Test
    void aMalformedExpressionStopsTheStartUpNamingTheSetting() {
        assertThatThrownBy(() -> GatewayInstance.start(List.of(), fixture.redis().url(), upstream.uri(),
                "ratelimit.rules.bad.capacity=10", "ratelimit.rules.bad.refill-tokens=1",
                "ratelimit.rules.bad.cost-expression=headers['X-N'].length()"))
                .rootCause().hasMessageContaining("ratelimit.rules.bad.cost-expression 'headers['X-N'].length()' "
                        + "uses a method call");
    }

    private static EntityExchangeResult<String> send(String path, String header, String value) {
        WebTestClient.RequestHeadersSpec<?> request = client.get().uri(path).header("X-API-Key", "cost-key");
        if (header != null) {
            request = request.header(header, value);
        }
        return request.exchange().expectBody(String.class).returnResult();
    }

    private static long remaining(EntityExchangeResult<?> result) {
        assertThat(result.getStatus().value()).isEqualTo(200);
        return Long.parseLong(result.getResponseHeaders().getFirst("X-RateLimit-Remaining"));
    }
}

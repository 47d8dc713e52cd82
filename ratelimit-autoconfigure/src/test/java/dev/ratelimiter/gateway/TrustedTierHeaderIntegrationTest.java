package dev.ratelimiter.gateway;

import java.util.List;
import java.util.function.Consumer;

import dev.ratelimiter.gateway.webflux.HeaderIdentityResolver;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tier from a header the authentication in front sets ({@code ratelimit.identity.tier.header}), on the header
 * path that needs no Mono, through a started gateway and real Redis.
 */
class TrustedTierHeaderIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    static ConfigurableApplicationContext gateway;
    static WebTestClient client;

    @BeforeAll
    static void startGateway() {
        gateway = GatewayInstance.start(fixture.redis().url(), upstream.uri(), "ratelimit.store.type=redis",
                "ratelimit.store.timeout=2s", "ratelimit.identity.tier.header=X-Plan", "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=2", "ratelimit.tiers.free.limits.default.refill-tokens=1",
                "ratelimit.tiers.free.limits.default.refill-period=1h", "ratelimit.tiers.pro.api-keys=listed-pro",
                "ratelimit.tiers.pro.limits.default.capacity=5", "ratelimit.tiers.pro.limits.default.refill-tokens=1",
                "ratelimit.tiers.pro.limits.default.refill-period=1h");
        client = GatewayInstance.client(gateway);
    }

    @AfterAll
    static void stopGateway() {
        gateway.close();
    }

    @Test
    void theHeaderPathIsKeptForATrustedTierHeader() {
        assertThat(gateway.getBean(RequestIdentityResolver.class)).isInstanceOf(HeaderIdentityResolver.class);
    }

    @Test
    void theTierTheAuthenticationSetIsTheCallersTier() {
        assertThat(statuses(6, headers -> {
            headers.set("X-API-Key", "k1");
            headers.set("X-Plan", "pro");
        })).containsExactly(200, 200, 200, 200, 200, 429);
        assertThat(statuses(3, headers -> headers.set("X-API-Key", "k2"))).as("no header: the key's tier")
                .containsExactly(200, 200, 429);
    }

    @Test
    void aTierHeaderSentTwiceIsNotBelievedAndTheKeysTierApplies() {
        assertThat(statuses(3, headers -> {
            headers.set("X-API-Key", "k3");
            headers.addAll("X-Plan", List.of("pro", "pro"));
        })).containsExactly(200, 200, 429);
        assertThat(statuses(6, headers -> {
            headers.set("X-API-Key", "listed-pro");
            headers.addAll("X-Plan", List.of("free", "free"));
        })).as("a listed key keeps its tier").containsExactly(200, 200, 200, 200, 200, 429);
    }

    @Test
    void aTierNobodyConfiguredIsTheKeysTierNeverAnError() {
        assertThat(statuses(3, headers -> {
            headers.set("X-API-Key", "k4");
            headers.set("X-Plan", "platinum");
        })).containsExactly(200, 200, 429);
    }

    private static List<Integer> statuses(int requests, Consumer<HttpHeaders> headers) {
        return Requests.statuses(client, requests, "/api/x", headers);
    }
}

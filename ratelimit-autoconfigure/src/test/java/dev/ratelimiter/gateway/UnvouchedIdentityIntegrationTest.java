package dev.ratelimiter.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationToken;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.server.WebFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Values the client writes beside a verified token, through a started gateway behind a real resource server and real
 * Redis: the README's identity ({@code api-key.source: claim, header}, {@code tier.claim: plan}) with unknown keys
 * held per address, token clients listed as {@code claim:<azp>}, the tenant from the token or else a header, and the
 * user header stripped as requests arrive and set by the application from the token.
 */
class UnvouchedIdentityIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    static ConfigurableApplicationContext gateway;
    static WebTestClient client;

    @BeforeAll
    static void startGateway() {
        gateway = GatewayInstance.start(List.of(TestTokens.ResourceServer.class, UserFromToken.class),
                fixture.redis().url(), upstream.uri(), "ratelimit.store.type=redis", "ratelimit.store.timeout=2s",
                // the tests share one address: a refusal remembered in memory would outlive the Redis clean-up
                "ratelimit.store.denial-cache=false",
                "ratelimit.identity.api-key.source=claim,header", "ratelimit.identity.tier.claim=plan",
                "ratelimit.identity.tenant.source=claim,header", "ratelimit.identity.tenant.max-length=16",
                "ratelimit.identity.tenant.pattern=[a-z0-9-]+", "ratelimit.identity.strip-headers=X-User-Id",
                "ratelimit.api-key.unknown.policy=per-address", "ratelimit.api-key.unknown.limit.capacity=3",
                "ratelimit.api-key.unknown.limit.refill-tokens=1", "ratelimit.api-key.unknown.limit.refill-period=1h",
                "ratelimit.default-tier=free", "ratelimit.tiers.free.api-keys=header-key,claim:t-client",
                "ratelimit.tiers.free.limits.default.capacity=10",
                "ratelimit.tiers.free.limits.default.refill-tokens=1",
                "ratelimit.tiers.free.limits.default.refill-period=1h",
                "ratelimit.tiers.pro.limits.default.capacity=2", "ratelimit.tiers.pro.limits.default.refill-tokens=1",
                "ratelimit.tiers.pro.limits.default.refill-period=1h",
                "ratelimit.tiers.gold.api-keys=claim:gold-client", "ratelimit.tiers.gold.limits.default.capacity=2",
                "ratelimit.tiers.gold.limits.default.refill-tokens=1",
                "ratelimit.tiers.gold.limits.default.refill-period=1h",
                "ratelimit.rules.tenant-cap.key=tenant", "ratelimit.rules.tenant-cap.match.paths=/api/tenant/**",
                "ratelimit.rules.tenant-cap.capacity=2", "ratelimit.rules.tenant-cap.refill-tokens=1",
                "ratelimit.rules.tenant-cap.refill-period=1h",
                "ratelimit.rules.user-cap.key=user", "ratelimit.rules.user-cap.match.paths=/api/user/**",
                "ratelimit.rules.user-cap.capacity=2", "ratelimit.rules.user-cap.refill-tokens=1",
                "ratelimit.rules.user-cap.refill-period=1h");
        client = GatewayInstance.client(gateway);
    }

    @AfterAll
    static void stopGateway() {
        gateway.close();
    }

    @Test
    void aHeaderKeyBesideATokensTierIsAnUnknownKeyNotAFreshBucketOfThatTier() {
        // a pro token without a key claim (Okta's cid, Cognito's client_id): before, each header value was a new
        // pro bucket (6 of 6); now each is an unknown key, held to the address's bucket of 3
        String pro = TestTokens.token("u-pro", Map.of("plan", "pro"));
        List<Integer> statuses = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            String key = "rotated-" + i;
            statuses.addAll(statuses(1, "/api/x", bearer(pro).andThen(headers -> headers.set("X-API-Key", key))));
        }
        assertThat(statuses).containsExactly(200, 200, 200, 429, 429, 429);
        assertThat(statuses(3, "/api/x", bearer(pro).andThen(headers -> headers.set("X-API-Key", "header-key"))))
                .as("a key listed for header use keeps the token's tier (pro: 2)").containsExactly(200, 200, 429);
    }

    @Test
    void aListedTokenClientIsNotReachableThroughTheApiKeyHeader() {
        assertThat(statuses(3, "/api/x", headers -> headers.set("X-API-Key", "gold-client")))
                .as("the listed azp sent as a header is an unknown key").containsExactly(200, 200, 200);
        assertThat(statuses(1, "/api/x", headers -> headers.set("X-API-Key", "claim:gold-client")))
                .as("nor can a header spell the token's namespace").containsExactly(429);
        assertThat(statuses(3, "/api/x", bearer(TestTokens.token("u-gold", Map.of("azp", "gold-client")))))
                .as("the token client's own gold bucket, untouched").containsExactly(200, 200, 429);
        assertThat(upstream.hits()).isEqualTo(5);
    }

    @Test
    void aTenantTheClientStatesWhereTheTokenCouldHaveSaidItIsCountedPerAddress() {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            String tenant = "rotated-" + i;
            statuses.addAll(statuses(1, "/api/tenant/x", headers -> {
                headers.set("X-API-Key", "header-key");
                headers.set("X-Tenant-Id", tenant);
            }));
        }
        assertThat(statuses).as("four tenants, one bucket of 2").containsExactly(200, 200, 429, 429);
        assertThat(statuses(1, "/api/tenant/x", bearer(TestTokens.token("u-t", Map.of("azp", "t-client")))
                .andThen(headers -> headers.set("X-Tenant-Id", "rotated-5"))))
                .as("beside a token without the claim too").containsExactly(429);
        assertThat(statuses(3, "/api/tenant/x", bearer(TestTokens.token("u-t", Map.of("azp", "t-client",
                "tenant_id", "acme"))))).as("the token's tenant: its own bucket").containsExactly(200, 200, 429);
    }

    @Test
    void aMalformedTenantIsRefusedBeforeAnyRuleWhereverItComesFrom() {
        String token = TestTokens.token("u-t", Map.of("azp", "t-client"));
        EntityExchangeResult<String> refused = client.get().uri("/api/tenant/x")
                .headers(bearer(token).andThen(headers -> headers.set("X-Tenant-Id", "Not-Lower-Case")))
                .exchange().expectBody(String.class).returnResult();
        assertThat(refused.getStatus().value()).isEqualTo(400);
        assertThat(refused.getResponseBody()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Bad Request\","
                + "\"status\":400,\"detail\":\"The tenant in the tenant_id claim of the token or the X-Tenant-Id "
                + "header is not in the expected format.\",\"error\":\"invalid_identity\"}");
        assertThat(statuses(1, "/api/tenant/x", bearer(TestTokens.token("u-t", Map.of("azp", "t-client",
                "tenant_id", "a-tenant-id-of-17"))))).as("longer than 16 characters").containsExactly(400);
        assertThat(upstream.hits()).isZero();
    }

    @Test
    void aClientSentUserHeaderIsStrippedBeforeTheLimiterAndOnlyTheApplicationsCopyCounts() {
        assertThat(statuses(3, "/api/user/x", headers -> {
            headers.set("X-API-Key", "header-key");
            headers.set("X-User-Id", "user-" + System.nanoTime());
        })).as("without the header every anonymous caller is one missing user").containsExactly(200, 200, 429);
        assertThat(statuses(3, "/api/user/x", bearer(TestTokens.token("alice", Map.of("azp", "t-client")))
                .andThen(headers -> headers.set("X-User-Id", "mallory"))))
                .as("the application set X-User-Id from the token: alice's own bucket").containsExactly(200, 200, 429);
    }

    private static Consumer<HttpHeaders> bearer(String token) {
        return headers -> headers.setBearerAuth(token);
    }

    private static List<Integer> statuses(int requests, String path, Consumer<HttpHeaders> headers) {
        return Requests.statuses(client, requests, path, headers);
    }

    /**
     * The application's own filter after Spring Security's: the verified caller's name as {@code X-User-Id}, the
     * header the limiter's {@code user} source reads. Client-sent copies were stripped before either ran.
     */
    @Configuration(proxyBeanMethods = false)
    static class UserFromToken {

        @Bean
        WebFilter userFromToken() {
            return (exchange, chain) -> exchange.getPrincipal()
                    .filter(JwtAuthenticationToken.class::isInstance)
                    .map(principal -> exchange.mutate().request(request -> request
                            .headers(headers -> headers.set("X-User-Id", principal.getName()))).build())
                    .defaultIfEmpty(exchange)
                    .flatMap(chain::filter);
        }
    }
}

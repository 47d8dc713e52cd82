package dev.ratelimiter.mvc;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux flavour's {@code UnvouchedIdentityIntegrationTest} on Gateway Server MVC, whose identity is read from the
 * servlet request after the servlet filters: header keys beside a token's tier, token clients listed as
 * {@code claim:<azp>}, a tenant stated beside the token, and the user header stripped before Spring Security.
 */
@DirtiesContext
@SpringBootTest(classes = { TestMvcGatewayApplication.class, MvcTestTokens.ResourceServer.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcUnvouchedIdentityIntegrationTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    @LocalServerPort
    int port;

    Http http;

    @BeforeEach
    void client() {
        http = new Http(port);
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("ratelimit.store.timeout", () -> "2s");
        // the tests share one address: a refusal remembered in memory would outlive the Redis clean-up
        registry.add("ratelimit.store.denial-cache", () -> "false");
        fixture.route(registry, 0, "api", "/api/**");
        Map.ofEntries(Map.entry("ratelimit.identity.api-key.source", "claim,header"),
                Map.entry("ratelimit.identity.tier.claim", "plan"),
                Map.entry("ratelimit.identity.tenant.source", "claim,header"),
                Map.entry("ratelimit.identity.tenant.pattern", "[a-z0-9-]+"),
                Map.entry("ratelimit.identity.strip-headers", "X-User-Id"),
                Map.entry("ratelimit.api-key.unknown.policy", "per-address"),
                Map.entry("ratelimit.api-key.unknown.limit.capacity", "3"),
                Map.entry("ratelimit.api-key.unknown.limit.refill-tokens", "1"),
                Map.entry("ratelimit.api-key.unknown.limit.refill-period", "1h"),
                Map.entry("ratelimit.default-tier", "free"),
                Map.entry("ratelimit.tiers.free.api-keys", "header-key,claim:t-client"),
                Map.entry("ratelimit.tiers.free.limits.default.capacity", "10"),
                Map.entry("ratelimit.tiers.free.limits.default.refill-tokens", "1"),
                Map.entry("ratelimit.tiers.free.limits.default.refill-period", "1h"),
                Map.entry("ratelimit.tiers.pro.limits.default.capacity", "2"),
                Map.entry("ratelimit.tiers.pro.limits.default.refill-tokens", "1"),
                Map.entry("ratelimit.tiers.pro.limits.default.refill-period", "1h"),
                Map.entry("ratelimit.tiers.gold.api-keys", "claim:gold-client"),
                Map.entry("ratelimit.tiers.gold.limits.default.capacity", "2"),
                Map.entry("ratelimit.tiers.gold.limits.default.refill-tokens", "1"),
                Map.entry("ratelimit.tiers.gold.limits.default.refill-period", "1h"),
                Map.entry("ratelimit.rules.tenant-cap.key", "tenant"),
                Map.entry("ratelimit.rules.tenant-cap.match.paths", "/api/tenant/**"),
                Map.entry("ratelimit.rules.tenant-cap.capacity", "2"),
                Map.entry("ratelimit.rules.tenant-cap.refill-tokens", "1"),
                Map.entry("ratelimit.rules.tenant-cap.refill-period", "1h"),
                Map.entry("ratelimit.rules.user-cap.key", "user"),
                Map.entry("ratelimit.rules.user-cap.match.paths", "/api/user/**"),
                Map.entry("ratelimit.rules.user-cap.capacity", "2"),
                Map.entry("ratelimit.rules.user-cap.refill-tokens", "1"),
                Map.entry("ratelimit.rules.user-cap.refill-period", "1h"))
                .forEach((name, value) -> registry.add(name, () -> value));
    }

    @Test
    void aHeaderKeyBesideATokensTierIsAnUnknownKeyNotAFreshBucketOfThatTier() throws Exception {
        String pro = MvcTestTokens.token("u-pro", Map.of("plan", "pro"));
        List<Integer> statuses = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            statuses.addAll(http.statuses(1, "/api/x", pro, "X-API-Key", "rotated-" + i));
        }
        assertThat(statuses).containsExactly(200, 200, 200, 429, 429, 429);
        assertThat(http.statuses(3, "/api/x", pro, "X-API-Key", "header-key"))
                .as("a key listed for header use keeps the token's tier (pro: 2)").containsExactly(200, 200, 429);
    }

    @Test
    void aListedTokenClientIsNotReachableThroughTheApiKeyHeader() throws Exception {
        assertThat(http.statuses(3, "/api/x", null, "X-API-Key", "gold-client")).containsExactly(200, 200, 200);
        assertThat(http.statuses(1, "/api/x", null, "X-API-Key", "claim:gold-client")).containsExactly(429);
        assertThat(http.statuses(3, "/api/x", MvcTestTokens.token("u-gold", Map.of("azp", "gold-client"))))
                .as("the token client's own gold bucket, untouched").containsExactly(200, 200, 429);
        assertThat(upstream.hits()).isEqualTo(5);
    }

    @Test
    void aTenantTheClientStatesWhereTheTokenCouldHaveSaidItIsCountedPerAddressAndAMalformedOneRefused()
            throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            statuses.addAll(http.statuses(1, "/api/tenant/x", null, "X-API-Key", "header-key", "X-Tenant-Id",
                    "rotated-" + i));
        }
        assertThat(statuses).as("four tenants, one bucket of 2").containsExactly(200, 200, 429, 429);
        String noTenant = MvcTestTokens.token("u-t", Map.of("azp", "t-client"));
        assertThat(http.statuses(1, "/api/tenant/x", noTenant, "X-Tenant-Id", "rotated-5"))
                .as("beside a token without the claim too").containsExactly(429);
        assertThat(http.statuses(3, "/api/tenant/x", MvcTestTokens.token("u-t", Map.of("azp", "t-client",
                "tenant_id", "acme")))).as("the token's tenant: its own bucket").containsExactly(200, 200, 429);

        HttpResponse<String> refused = http.getAs("/api/tenant/x", noTenant, "X-Tenant-Id", "Not-Lower-Case");
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(refused.body()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                + "\"detail\":\"The tenant in the tenant_id claim of the token or the X-Tenant-Id header is not in the "
                + "expected format.\",\"error\":\"invalid_identity\"}");
    }

    @Test
    void aClientSentUserHeaderIsStrippedBeforeTheLimiterReadsIt() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            statuses.addAll(http.statuses(1, "/api/user/x", null, "X-API-Key", "header-key", "X-User-Id",
                    "rotated-" + i));
        }
        assertThat(statuses).as("without the header every caller is one missing user").containsExactly(200, 200, 429);
    }
}

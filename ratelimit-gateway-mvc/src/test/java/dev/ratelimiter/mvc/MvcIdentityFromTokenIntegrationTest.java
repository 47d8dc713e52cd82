package dev.ratelimiter.mvc;

import java.net.http.HttpResponse;
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
 * Identity from the authentication layer on the MVC flavour, through a started Gateway Server MVC behind a real
 * servlet Spring Security resource server (JWTs signed in the test) and real Redis, with the WebFlux flavour's
 * settings: the API key is the token's {@code azp} (required), the user its {@code sub} claim, the tier its
 * {@code plan} claim and the tenant an expression over the claims, the query and the route.
 */
@DirtiesContext
@SpringBootTest(classes = { TestMvcGatewayApplication.class, MvcTestTokens.ResourceServer.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcIdentityFromTokenIntegrationTest {

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
        fixture.route(registry, 0, "api", "/api/**");
        fixture.route(registry, 1, "partner", "/partner/**");
        Map.ofEntries(Map.entry("ratelimit.identity.api-key.source", "claim"),
                Map.entry("ratelimit.api-key.when-missing", "reject"),
                Map.entry("ratelimit.identity.user.source", "claim"),
                Map.entry("ratelimit.identity.tier.claim", "plan"),
                Map.entry("ratelimit.identity.tenant.source", "expression"),
                Map.entry("ratelimit.identity.tenant.expression",
                        "query['org'] != null ? route + '/' + query['org'] : claims['tenant_id']"),
                // the query may name any tenant here, as the claim does: counted as given
                Map.entry("ratelimit.identity.tenant.unknown.policy", "accept"),
                Map.entry("ratelimit.default-tier", "free"),
                Map.entry("ratelimit.tiers.free.limits.default.capacity", "4"),
                Map.entry("ratelimit.tiers.free.limits.default.refill-tokens", "1"),
                Map.entry("ratelimit.tiers.free.limits.default.refill-period", "1h"),
                Map.entry("ratelimit.tiers.pro.limits.default.capacity", "6"),
                Map.entry("ratelimit.tiers.pro.limits.default.refill-tokens", "1"),
                Map.entry("ratelimit.tiers.pro.limits.default.refill-period", "1h"),
                Map.entry("ratelimit.rules.user-cap.key", "user"),
                Map.entry("ratelimit.rules.user-cap.match.paths", "/api/user/**"),
                Map.entry("ratelimit.rules.user-cap.capacity", "2"),
                Map.entry("ratelimit.rules.user-cap.refill-tokens", "1"),
                Map.entry("ratelimit.rules.user-cap.refill-period", "1h"),
                Map.entry("ratelimit.rules.tenant-cap.key", "tenant"),
                Map.entry("ratelimit.rules.tenant-cap.when-missing", "deny"),
                Map.entry("ratelimit.rules.tenant-cap.match.paths", "/api/tenant/**,/partner/tenant/**"),
                Map.entry("ratelimit.rules.tenant-cap.capacity", "1"),
                Map.entry("ratelimit.rules.tenant-cap.refill-tokens", "1"),
                Map.entry("ratelimit.rules.tenant-cap.refill-period", "1h"))
                .forEach((name, value) -> registry.add(name, () -> value));
    }

    @Test
    void theUserBucketIsTheSubClaimsAndAUserHeaderBesideItChangesNothing() throws Exception {
        String alice = MvcTestTokens.token("alice", Map.of("azp", "client-alice"));
        assertThat(statuses(3, "/api/user/x", alice)).containsExactly(200, 200, 429);
        assertThat(statuses(1, "/api/user/x", MvcTestTokens.token("bob", Map.of("azp", "client-bob"))))
                .as("another sub, another bucket").containsExactly(200);
        // were the header read, alice's spent bucket would refuse carol
        assertThat(statuses(1, "/api/user/x", MvcTestTokens.token("carol", Map.of("azp", "client-carol")),
                "X-User-Id", "alice")).containsExactly(200);
        assertThat(upstream.hits()).isEqualTo(4);
    }

    @Test
    void theApiKeyIsTheAzpClaimAndWithoutItTheRequestIs401EvenWithAnApiKeyHeader() throws Exception {
        String clientA = MvcTestTokens.token("u1", Map.of("azp", "client-a"));
        assertThat(statuses(5, "/api/x", clientA)).containsExactly(200, 200, 200, 200, 429);
        assertThat(statuses(1, "/api/x", clientA, "X-API-Key", "fresh")).as("a header does not replace the claim")
                .containsExactly(429);

        for (String token : new String[] { null, MvcTestTokens.token("u2", Map.of()) }) {
            HttpResponse<String> refused = send("/api/x", token, "X-API-Key", "header-key");
            assertThat(refused.statusCode()).isEqualTo(401);
            assertThat(refused.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
            assertThat(refused.body()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Unauthorized\","
                    + "\"status\":401,\"detail\":\"This API requires an API key in the azp claim of the token.\","
                    + "\"error\":\"missing_api_key\"}");
        }
        assertThat(upstream.hits()).isEqualTo(4);
    }

    @Test
    void theTierIsThePlanClaimAndAClientSentTierHeaderIsIgnored() throws Exception {
        String pro = MvcTestTokens.token("u3", Map.of("azp", "client-pro", "plan", "pro"));
        assertThat(statuses(7, "/api/x", pro)).containsExactly(200, 200, 200, 200, 200, 200, 429);
        String noPlan = MvcTestTokens.token("u4", Map.of("azp", "client-free"));
        assertThat(statuses(5, "/api/x", noPlan, "X-Tier", "pro", "X-Plan", "pro"))
                .containsExactly(200, 200, 200, 200, 429);
    }

    @Test
    void theTenantIsTheExpressionsValueOverTheClaimsTheQueryAndTheRoute() throws Exception {
        assertThat(statuses(1, "/api/tenant/x", MvcTestTokens.token("u5", Map.of("azp", "c5", "tenant_id", "t1"))))
                .containsExactly(200);
        assertThat(statuses(1, "/api/tenant/x", MvcTestTokens.token("u6", Map.of("azp", "c6", "tenant_id", "t1"))))
                .as("one tenant, one bucket, whoever calls").containsExactly(429);

        String noTenant = MvcTestTokens.token("u7", Map.of("azp", "c7"));
        assertThat(statuses(2, "/api/tenant/x?org=o%201", noTenant)).containsExactly(200, 429);
        assertThat(statuses(1, "/api/tenant/x?org=o2", noTenant)).containsExactly(200);
        assertThat(statuses(2, "/partner/tenant/x?org=o%201", noTenant)).as("the route is part of the value")
                .containsExactly(200, 429);

        HttpResponse<String> refused = send("/api/tenant/x", noTenant);
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(refused.body()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                + "\"detail\":\"Limit 'tenant-cap' needs the value of ratelimit.identity.tenant.expression, which "
                + "this request lacks.\",\"error\":\"missing_identity\",\"policy\":\"tenant-cap\"}");
        assertThat(upstream.hits()).isEqualTo(4);
    }

    @Test
    void aTokenSignedWithAnotherKeyIsRefusedBeforeTheLimiterCountsIt() throws Exception {
        String forged = MvcTestTokens.forged("mallory", Map.of("azp", "client-m", "plan", "pro"));
        assertThat(statuses(1, "/api/x", forged)).containsExactly(401);
        assertThat(upstream.hits()).isZero();
    }

    private List<Integer> statuses(int requests, String path, String token, String... headers) throws Exception {
        return http.statuses(requests, path, token, headers);
    }

    private HttpResponse<String> send(String path, String token, String... headers) throws Exception {
        return http.getAs(path, token, headers);
    }
}

package dev.ratelimiter.gateway;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Identity from the authentication layer through a started gateway behind a real Spring Security resource server and
 * real Redis: the API key is the token's {@code azp} (the X-API-Key header for callers without a token), the user its
 * principal, the tenant its {@code tenant_id} claim and the tier its {@code plan} claim.
 */
class IdentityFromTokenIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    static ConfigurableApplicationContext gateway;
    static WebTestClient client;

    @BeforeAll
    static void startGateway() {
        gateway = GatewayInstance.start(List.of(TestTokens.ResourceServer.class), fixture.redis().url(),
                upstream.uri(), "ratelimit.store.type=redis", "ratelimit.store.timeout=2s",
                "ratelimit.identity.api-key.source=claim,header", "ratelimit.identity.user.source=principal",
                "ratelimit.identity.tenant.source=claim", "ratelimit.identity.tier.claim=plan",
                "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=2", "ratelimit.tiers.free.limits.default.refill-tokens=1",
                "ratelimit.tiers.free.limits.default.refill-period=1h",
                "ratelimit.tiers.pro.limits.default.capacity=5", "ratelimit.tiers.pro.limits.default.refill-tokens=1",
                "ratelimit.tiers.pro.limits.default.refill-period=1h",
                "ratelimit.rules.tenant-cap.key=tenant", "ratelimit.rules.tenant-cap.when-missing=deny",
                "ratelimit.rules.tenant-cap.match.paths=/api/tenant/**", "ratelimit.rules.tenant-cap.capacity=100",
                "ratelimit.rules.tenant-cap.refill-tokens=1", "ratelimit.rules.tenant-cap.refill-period=1h",
                "ratelimit.rules.user-cap.key=user", "ratelimit.rules.user-cap.match.paths=/api/user/**",
                "ratelimit.rules.user-cap.capacity=1", "ratelimit.rules.user-cap.refill-tokens=1",
                "ratelimit.rules.user-cap.refill-period=1h");
        client = GatewayInstance.client(gateway);
    }

    @AfterAll
    static void stopGateway() {
        gateway.close();
    }

    @Test
    void theApiKeyIsTheTokensAzpAndAnApiKeyHeaderBesideItChangesNothing() {
        String clientA = TestTokens.token("u1", Map.of("azp", "client-a"));
        assertThat(statuses(3, "/api/x", bearer(clientA))).containsExactly(200, 200, 429);
        assertThat(statuses(1, "/api/x", bearer(clientA).andThen(headers -> headers.set("X-API-Key", "fresh"))))
                .as("the claim wins over the header").containsExactly(429);
        assertThat(statuses(1, "/api/x", bearer(TestTokens.token("u1", Map.of("azp", "client-b")))))
                .containsExactly(200);
        assertThat(upstream.hits()).isEqualTo(3);
    }

    @Test
    void withoutATokenTheApiKeyHeaderCountsAndWithoutEitherTheRefusalNamesBoth() {
        assertThat(statuses(3, "/api/x", headers -> headers.set("X-API-Key", "header-key")))
                .containsExactly(200, 200, 429);

        EntityExchangeResult<String> refused = client.get().uri("/api/x").exchange().expectBody(String.class)
                .returnResult();
        assertThat(refused.getStatus().value()).isEqualTo(401);
        assertThat(refused.getResponseHeaders().getFirst("WWW-Authenticate"))
                .isEqualTo("Bearer, ApiKey header=\"X-API-Key\"");
        assertThat(refused.getResponseBody()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Unauthorized\","
                + "\"status\":401,\"detail\":\"This API requires an API key in the azp claim of the token or the "
                + "X-API-Key header.\",\"error\":\"missing_api_key\"}");
    }

    @Test
    void theTierIsThePlanClaimAndAClientSentTierHeaderIsIgnored() {
        String pro = TestTokens.token("u2", Map.of("azp", "client-pro", "plan", "pro"));
        assertThat(statuses(6, "/api/x", bearer(pro))).containsExactly(200, 200, 200, 200, 200, 429);

        String noPlan = TestTokens.token("u3", Map.of("azp", "client-free"));
        assertThat(statuses(3, "/api/x", bearer(noPlan).andThen(headers -> {
            headers.set("X-Tier", "pro");
            headers.set("X-Plan", "pro");
        }))).as("a token without the claim is its key's tier, whatever headers say").containsExactly(200, 200, 429);
    }

    @Test
    void aPlanNobodyConfiguredIsTheKeysTierNeverAnError() {
        String platinum = TestTokens.token("u4", Map.of("azp", "client-platinum", "plan", "platinum"));
        assertThat(statuses(3, "/api/x", bearer(platinum))).containsExactly(200, 200, 429);
    }

    @Test
    void theUserIsThePrincipalNeverAClientSentUserHeader() {
        String alice = TestTokens.token("alice", Map.of("azp", "client-alice"));
        assertThat(statuses(2, "/api/user/x", bearer(alice))).containsExactly(200, 429);
        assertThat(statuses(1, "/api/user/x", bearer(TestTokens.token("bob", Map.of("azp", "client-bob")))))
                .containsExactly(200);
        // were the header read, alice's spent bucket would refuse this; without a principal it has no user at all
        assertThat(statuses(1, "/api/user/x", headers -> {
            headers.set("X-API-Key", "anonymous-key");
            headers.set("X-User-Id", "alice");
        })).containsExactly(200);
    }

    @Test
    void aTokenWithoutTheTenantClaimIsRefusedNamingTheClaim() {
        EntityExchangeResult<String> refused = client.get().uri("/api/tenant/x")
                .headers(bearer(TestTokens.token("u5", Map.of("azp", "client-t")))
                        .andThen(headers -> headers.set("X-Tenant-Id", "t-from-the-client")))
                .exchange().expectBody(String.class).returnResult();
        assertThat(refused.getStatus().value()).isEqualTo(400);
        assertThat(refused.getResponseBody()).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Bad Request\","
                + "\"status\":400,\"detail\":\"Limit 'tenant-cap' needs the tenant_id claim of the token, which this "
                + "request lacks.\",\"error\":\"missing_identity\",\"policy\":\"tenant-cap\"}");
        assertThat(statuses(1, "/api/tenant/x", bearer(TestTokens.token("u5",
                Map.of("azp", "client-t", "tenant_id", "t1"))))).containsExactly(200);
        assertThat(upstream.hits()).isEqualTo(1);
    }

    @Test
    void aTokenSignedWithAnotherKeyIsRefusedBeforeTheLimiterCountsIt() {
        String forged = TestTokens.forged("mallory", Map.of("azp", "client-m", "plan", "pro"));
        assertThat(statuses(1, "/api/x", bearer(forged))).containsExactly(401);
        assertThat(upstream.hits()).isZero();
    }

    @Test
    void anUnsignedOrMangledTokenNeverReachesTheClaimReader() {
        java.util.Base64.Encoder base64 = java.util.Base64.getUrlEncoder().withoutPadding();
        String claims = base64.encodeToString("{\"sub\":\"mallory\",\"azp\":\"client-m\",\"plan\":\"pro\"}"
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        String signed = TestTokens.token("mallory", Map.of("azp", "client-m", "plan", "pro"));
        String[] parts = signed.split("\\.");
        for (String token : List.of(base64.encodeToString("{\"alg\":\"none\"}".getBytes()) + "." + claims + ".",
                base64.encodeToString("{\"alg\":\"HS256\"}".getBytes()) + "." + claims + "." + parts[2],
                parts[0] + "." + claims + "." + parts[2], parts[0] + "." + parts[1] + ".", parts[0] + "." + parts[1],
                "not-a-jwt")) {
            assertThat(statuses(1, "/api/x", bearer(token))).as(token).containsExactly(401);
        }
        assertThat(upstream.hits()).isZero();
    }

    private static Consumer<HttpHeaders> bearer(String token) {
        return headers -> headers.setBearerAuth(token);
    }

    private static List<Integer> statuses(int requests, String path, Consumer<HttpHeaders> headers) {
        return Requests.statuses(client, requests, path, headers);
    }
}

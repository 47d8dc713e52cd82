package dev.ratelimiter.gateway;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole request path: a real gateway, the auto-configured filter, a real Redis, and a stub upstream
 * that counts what reaches it.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RateLimitFilterIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    @LocalServerPort
    int port;

    WebTestClient client;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("server.max-http-request-header-size", () -> "16KB");
        fixture.route(registry, 0, "api", "/api/**");
        fixture.route(registry, 1, "reports", "/reports/**");
        registry.add("spring.cloud.gateway.server.webflux.routes[1].metadata.route-class", () -> "reports");
        registry.add("spring.cloud.gateway.server.webflux.routes[1].metadata.ratelimit-cost", () -> "2");
        fixture.route(registry, 2, "probe", "/probe/**");
        registry.add("spring.cloud.gateway.server.webflux.routes[2].metadata.ratelimit-enabled", () -> " FALSE ");
        registry.add("ratelimit.store.type", () -> "redis");
        // Generous: these tests pin exact counts, which a cold JVM's first calls must not miss by falling back.
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.default-tier", () -> "free");
        // One token an hour: nothing refills while a test runs, so every count below is exact.
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "5");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
        registry.add("ratelimit.tiers.free.limits.reports.capacity", () -> "6");
        registry.add("ratelimit.tiers.free.limits.reports.refill-tokens", () -> "1");
        registry.add("ratelimit.tiers.free.limits.reports.refill-period", () -> "1h");
        registry.add("ratelimit.tiers.pro.api-keys[0]", () -> "pro-key");
        registry.add("ratelimit.tiers.pro.limits.default.capacity", () -> "20");
        registry.add("ratelimit.tiers.pro.limits.default.refill-tokens", () -> "20");
        registry.add("ratelimit.tiers.pro.limits.default.refill-period", () -> "1h");
    }

    @BeforeEach
    void reset() {
        client = GatewayInstance.client(port);
    }

    @Test
    void allowedRequestReachesTheUpstreamWithRateLimitHeaders() {
        long before = Instant.now().getEpochSecond();
        EntityExchangeResult<String> result = get("/api/hello", "alice");
        HttpHeaders headers = result.getResponseHeaders();
        assertThat(result.getStatus().value()).isEqualTo(200);
        assertThat(result.getResponseBody()).isEqualTo("{\"upstream\":\"stub\"}");
        assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("5");
        assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("4");
        assertThat(Long.parseLong(headers.getFirst("X-RateLimit-Reset"))).isBetween(before + 3599, before + 3602);
        assertThat(headers.getFirst("RateLimit-Policy")).isEqualTo("\"free.default\";q=5;w=18000");
        assertThat(headers.getFirst("RateLimit")).isEqualTo("\"free.default\";r=4;t=3600");
        assertThat(headers.containsHeader("Retry-After")).isFalse();
        assertThat(upstream.hitsForApiKey("alice")).isEqualTo(1);
    }

    @Test
    void deniedRequestNeverReachesTheUpstream() {
        for (int i = 0; i < 5; i++) {
            assertThat(get("/api/hello", "bob").getStatus().value()).isEqualTo(200);
        }
        EntityExchangeResult<String> denied = get("/api/hello", "bob");
        for (int i = 0; i < 10; i++) {
            assertThat(get("/api/hello", "bob").getStatus().value()).isEqualTo(429);
        }
        assertThat(upstream.hitsForApiKey("bob")).isEqualTo(5);

        HttpHeaders headers = denied.getResponseHeaders();
        assertThat(denied.getStatus().value()).isEqualTo(429);
        assertThat(headers.getFirst("Retry-After")).isEqualTo("3600");
        assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("5");
        assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("0");
        assertThat(headers.getFirst("RateLimit")).isEqualTo("\"free.default\";r=0;t=18000");
        assertThat(headers.getContentType().toString()).isEqualTo("application/problem+json");
        assertThat(denied.getResponseBody()).isEqualTo("{\"type\":"
                + "\"https://iana.org/assignments/http-problem-types#quota-exceeded\",\"title\":\"Too Many Requests\","
                + "\"status\":429,\"detail\":\"Rate limit 'free.default' exceeded; retry after 3600 seconds.\","
                + "\"error\":\"rate_limited\",\"retryAfter\":3600,\"policy\":\"free.default\","
                + "\"violated-policies\":[\"free.default\"]}");
        assertThat(headers.getContentLength()).isEqualTo(denied.getResponseBodyContent().length);
    }

    @Test
    void eachClientHasItsOwnBucket() {
        for (int i = 0; i < 6; i++) {
            get("/api/hello", "carol");
        }
        assertThat(get("/api/hello", "dave").getStatus().value()).isEqualTo(200);
        assertThat(upstream.hitsForApiKey("carol")).isEqualTo(5);
        assertThat(upstream.hitsForApiKey("dave")).isEqualTo(1);
    }

    @Test
    void keysListedUnderATierGetThatTiersLimit() {
        EntityExchangeResult<String> result = get("/api/hello", "pro-key");
        assertThat(result.getResponseHeaders().getFirst("X-RateLimit-Limit")).isEqualTo("20");
        assertThat(result.getResponseHeaders().getFirst("RateLimit-Policy")).startsWith("\"pro.default\"");
    }

    @Test
    void routeClassAndCostComeFromRouteMetadata() {
        EntityExchangeResult<String> first = get("/reports/daily", "erin");
        assertThat(first.getResponseHeaders().getFirst("X-RateLimit-Limit")).isEqualTo("6");
        assertThat(first.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("4");
        get("/reports/daily", "erin");
        get("/reports/daily", "erin");
        assertThat(get("/reports/daily", "erin").getStatus().value()).isEqualTo(429);
        assertThat(upstream.hits("/reports/daily")).isEqualTo(3);
        assertThat(get("/api/hello", "erin").getResponseHeaders().getFirst("X-RateLimit-Remaining"))
                .as("the default route class has its own bucket").isEqualTo("4");
    }

    @Test
    void aRouteThatOptsOutIsNeitherLimitedNorCountedAndNeedsNoApiKey() {
        for (int i = 0; i < 8; i++) {
            EntityExchangeResult<String> result = get("/probe/ready", "frank");
            assertThat(result.getStatus().value()).isEqualTo(200);
            assertThat(result.getResponseHeaders().containsHeader("RateLimit")).isFalse();
            assertThat(result.getResponseHeaders().containsHeader("X-RateLimit-Remaining")).isFalse();
        }
        assertThat(client.get().uri("/probe/ready").exchange().expectBody(String.class).returnResult().getStatus()
                .value()).as("no API key needed where nothing is limited").isEqualTo(200);
        assertThat(upstream.hits("/probe/ready")).isEqualTo(9);
        assertThat(get("/api/hello", "frank").getResponseHeaders().getFirst("X-RateLimit-Remaining"))
                .as("the opted-out route took nothing from the caller's bucket").isEqualTo("4");
    }

    @Test
    void requestWithoutAnApiKeyGetsAProblemAndNeverReachesTheUpstream() throws Exception {
        EntityExchangeResult<String> result = client.get().uri("/api/hello").exchange().expectBody(String.class)
                .returnResult();
        assertThat(result.getStatus().value()).isEqualTo(401);
        assertThat(result.getResponseHeaders().getFirst("WWW-Authenticate")).isEqualTo("ApiKey header=\"X-API-Key\"");
        assertThat(result.getResponseHeaders().getContentType().toString()).isEqualTo("application/problem+json");
        assertThat(result.getResponseBody()).contains("\"error\":\"missing_api_key\"", "\"status\":401");
        assertThat(RawHttp.get(port, "/api/hello", "X-API-Key", "   ".getBytes(StandardCharsets.US_ASCII)))
                .as("a blank key is no key").isEqualTo(401);
        assertThat(upstream.hits()).isZero();
    }

    @Test
    void hostileApiKeysNeverCauseA500NorTouchAnotherClientsBucket() throws Exception {
        get("/api/hello", "victim");
        List<byte[]> hostile = new ArrayList<>();
        hostile.add("k".repeat(8 * 1024).getBytes(StandardCharsets.US_ASCII));
        hostile.add("{victim}".getBytes(StandardCharsets.US_ASCII));
        hostile.add("victim}:free.default".getBytes(StandardCharsets.US_ASCII));
        hostile.add("rl:{".getBytes(StandardCharsets.US_ASCII));
        hostile.add("a:b:c d e".getBytes(StandardCharsets.US_ASCII));
        hostile.add(new byte[] { 'x', 0x01, 0x07, 0x1b, 'y' });
        hostile.add("ключ-日本-ü".getBytes(StandardCharsets.UTF_8));
        hostile.add(new byte[] { (byte) 0xff, (byte) 0xfe, (byte) 0x80 });
        List<Integer> statuses = new ArrayList<>();
        for (byte[] value : hostile) {
            for (int i = 0; i < 7; i++) {
                statuses.add(RawHttp.get(port, "/api/hello", "X-API-Key", value));
            }
        }
        assertThat(statuses).allSatisfy(status -> assertThat(status).isIn(200, 400, 429, 431));
        assertThat(statuses).as("most hostile keys are just keys: limited like any other").contains(200, 429);

        assertThat(get("/api/hello", "victim").getResponseHeaders().getFirst("X-RateLimit-Remaining"))
                .as("the victim's bucket was touched by nobody else").isEqualTo("3");
        // the instance heartbeat (rl:{instances}) may be written again at any time after the FLUSHALL
        String[] keys = redis.command("KEYS", "*").lines().filter(key -> !key.equals("rl:{instances}"))
                .toArray(String[]::new);
        assertThat(keys).allSatisfy(key -> assertThat(key).matches("rl:\\{[A-Za-z0-9_-]{22}\\}:free\\.default@t"));
        assertThat(Arrays.asList(keys)).contains("rl:{" + ClientIds.unkeyed().of("victim") + "}:free.default@t");
    }

    /**
     * Two API keys are two claims of who is calling: refused before any rule or store is asked. The user and tenant
     * headers count only where a rule reads them (none here; see {@code MissingIdentityIntegrationTest}).
     */
    @Test
    void aRepeatedApiKeyIsRefusedWithA400NamingIt() throws Exception {
        assertThat(RawHttp.get(port, "/api/hello", "X-API-Key: one", "X-API-Key: two")).isEqualTo(400);
        assertThat(RawHttp.get(port, "/api/hello", "X-API-Key: one", "X-API-Key: one")).isEqualTo(400);
        EntityExchangeResult<String> result = client.get().uri("/api/hello")
                .headers(headers -> headers.addAll("X-API-Key", List.of("k1", "k2"))).exchange()
                .expectBody(String.class).returnResult();
        assertThat(result.getStatus().value()).isEqualTo(400);
        assertThat(result.getResponseHeaders().getContentType().toString()).isEqualTo("application/problem+json");
        assertThat(result.getResponseBody()).contains("\"error\":\"duplicate_identity_header\"",
                "\"header\":\"X-API-Key\"");
        assertThat(upstream.hits()).isZero();
        assertThat(redis.command("KEYS", "rl:*:*").trim()).as("no bucket was touched").isEmpty();
        assertThat(RawHttp.get(port, "/api/hello", "X-API-Key: frank", "X-User-Id: u1", "X-User-Id: u2"))
                .as("no rule here reads the user").isEqualTo(200);
    }

    private EntityExchangeResult<String> get(String path, String apiKey) {
        return client.get().uri(path).header("X-API-Key", apiKey).exchange().expectBody(String.class).returnResult();
    }
}

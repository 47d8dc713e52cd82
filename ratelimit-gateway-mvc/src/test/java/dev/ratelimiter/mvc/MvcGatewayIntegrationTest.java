package dev.ratelimiter.mvc;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.gateway.RateLimitHeaders;
import dev.ratelimiter.gateway.RateLimitResponseCustomizer;
import dev.ratelimiter.gateway.RouteMetadata;
import dev.ratelimiter.gateway.Refusal;
import dev.ratelimiter.testsupport.LoopbackPorts;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions;
import org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions;
import org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The MVC flavour through a started Gateway Server MVC on Tomcat, a real Redis and a stub upstream: the same decisions,
 * fields and problem bodies as the WebFlux flavour, permits given back however a request ends, and the per-route
 * opt-out.
 */
@DirtiesContext
@SpringBootTest(classes = { TestMvcGatewayApplication.class, MvcGatewayIntegrationTest.SupportLink.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcGatewayIntegrationTest {

    /** A user's customizer, as on WebFlux: it sees the request's route and adds to the 429. */
    @TestConfiguration(proxyBeanMethods = false)
    static class SupportLink {

        @Bean
        RateLimitResponseCustomizer supportLink() {
            return (refusal, context) -> {
                if (context.kind() == Refusal.Kind.RATE_LIMITED) {
                    refusal.getProblemDetail().setProperty("support",
                            "https://example.com/limits/" + context.request().routeId());
                    refusal.getHeaders().set("X-Plan-Upgrade", "https://example.com/pricing");
                }
            };
        }

        /** Routes written in Java: their metadata is what they were built with. */
        @Bean
        RouterFunction<ServerResponse> javaRoutes() {
            return GatewayRouterFunctions.route("java-reports").GET("/java/reports/**", HandlerFunctions.http())
                    .before(BeforeFilterFunctions.uri(upstream.uri()))
                    .withAttribute(RouteMetadata.ROUTE_CLASS, "reports").withAttribute(RouteMetadata.COST, 2).build()
                    .and(GatewayRouterFunctions.route("java-open").GET("/java/open/**", HandlerFunctions.http())
                            .before(BeforeFilterFunctions.uri(upstream.uri()))
                            .withAttribute(RouteMetadata.ENABLED, false).build());
        }
    }

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    private static final JsonMapper json = JsonMapper.builder().build();

    @LocalServerPort
    int port;

    Http http;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("ratelimit.store.timeout", () -> "2s");
        fixture.route(registry, 0, "limited", "/limited/**");
        fixture.route(registry, 1, "held", "/held/**");
        String open = fixture.route(registry, 2, "open", "/open/**");
        registry.add(open + "metadata.ratelimit-enabled", () -> "false");
        MvcRoutes.route(registry, 3, "broken", "/broken/**", () -> "http://127.0.0.1:" + LoopbackPorts.refusing());
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "100000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "100000");
        registry.add("ratelimit.rules.three.capacity", () -> "3");
        registry.add("ratelimit.rules.three.refill-tokens", () -> "3");
        registry.add("ratelimit.rules.three.refill-period", () -> "1h");
        registry.add("ratelimit.rules.three.match.route-ids[0]", () -> "limited");
        registry.add("ratelimit.rules.three.match.route-ids[1]", () -> "open");
        registry.add("ratelimit.rules.three.match.route-ids[2]", () -> "java-open");
        registry.add("ratelimit.rules.reports.capacity", () -> "4");
        registry.add("ratelimit.rules.reports.refill-tokens", () -> "4");
        registry.add("ratelimit.rules.reports.refill-period", () -> "1h");
        registry.add("ratelimit.rules.reports.match.route-classes[0]", () -> "reports");
        registry.add("ratelimit.rules.one-at-a-time.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.one-at-a-time.max-in-progress", () -> "1");
        // Far longer than the tests wait for a permit to come back: only a release can free it in time.
        registry.add("ratelimit.rules.one-at-a-time.lease", () -> "60s");
        registry.add("ratelimit.rules.one-at-a-time.match.route-ids[0]", () -> "held");
        registry.add("ratelimit.rules.one-at-a-time.match.route-ids[1]", () -> "broken");
        // a cap by path, so that a path upstreams read two ways is refused (PathRuleEvasionTest on WebFlux)
        registry.add("ratelimit.rules.admin-paths.match.paths[0]", () -> "/limited/admin/**");
        registry.add("ratelimit.rules.admin-paths.key[0]", () -> "route");
        registry.add("ratelimit.rules.admin-paths.capacity", () -> "1000");
        registry.add("ratelimit.rules.admin-paths.refill-tokens", () -> "1000");
    }

    @BeforeEach
    void client() {
        http = new Http(port);
        upstream.delay(Duration.ZERO);
    }

    @Test
    void overTheLimitIsAnsweredWithTheWebFluxFlavoursFieldsAndBodyAndNeverReachesTheUpstream() throws Exception {
        HttpResponse<String> first = http.get("/limited/a", "key-a");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue(RateLimitHeaders.LIMIT)).hasValue("3");
        assertThat(first.headers().firstValue(RateLimitHeaders.REMAINING)).hasValue("2");
        assertThat(first.headers().firstValue(RateLimitHeaders.POLICY))
                .hasValue("\"free.default\";q=100000;w=1, \"three\";q=3;w=3600");
        assertThat(first.body()).contains("stub");
        http.get("/limited/a", "key-a");
        http.get("/limited/a", "key-a");

        HttpResponse<String> denied = http.get("/limited/a", "key-a");

        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(denied.headers().firstValue(RateLimitHeaders.REMAINING)).hasValue("0");
        assertThat(denied.headers().firstValue(RateLimitHeaders.RATE_LIMIT).orElseThrow())
                .startsWith("\"three\";r=0;t=");
        long retryAfter = Long.parseLong(denied.headers().firstValue("Retry-After").orElseThrow());
        assertThat(retryAfter).isBetween(1L, 3600L);
        JsonNode body = json.readTree(denied.body());
        assertThat(body.get("error").asString()).isEqualTo("rate_limited");
        assertThat(body.get("policy").asString()).isEqualTo("three");
        assertThat(body.get("retryAfter").asLong()).isEqualTo(retryAfter);
        assertThat(body.get("violated-policies").get(0).asString()).isEqualTo("three");
        assertThat(body.get("type").asString()).endsWith("#quota-exceeded");
        assertThat(body.get("status").asInt()).isEqualTo(429);
        assertThat(body.get("support").asString()).isEqualTo("https://example.com/limits/limited");
        assertThat(denied.headers().firstValue("X-Plan-Upgrade")).hasValue("https://example.com/pricing");
        assertThat(upstream.hits("/limited/a")).isEqualTo(3);
        assertThat(http.get("/limited/a", "key-b").statusCode()).as("another client's bucket").isEqualTo(200);
    }

    @Test
    void anApiKeySentTwiceIsRefusedBeforeAnyRuleIsAsked() throws Exception {
        HttpResponse<String> refused = http.getWithTwoKeys("/limited/twice");

        assertThat(refused.statusCode()).isEqualTo(400);
        JsonNode body = json.readTree(refused.body());
        assertThat(body.get("error").asString()).isEqualTo("duplicate_identity_header");
        assertThat(body.get("header").asString()).isEqualTo("X-API-Key");
        assertThat(upstream.hits("/limited/twice")).isZero();
    }

    /**
     * Tomcat reads /limited/admin/..;/x as /limited/x, nginx under /limited/admin/: refused as on WebFlux, by the
     * same code, before any rule is asked.
     */
    @Test
    void aPathUpstreamsReadTwoWaysIsRefusedBeforeAnyRuleIsAsked() throws Exception {
        HttpResponse<String> refused = http.get("/limited/admin/..;/x", "key-a");

        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(json.readTree(refused.body()).get("error").asString()).isEqualTo("ambiguous_path");
        assertThat(upstream.hits("/limited/admin/..;/x") + upstream.hits("/limited/x")).isZero();
    }

    @Test
    void aRouteOptedOutByItsMetadataIsNotLimited() throws Exception {
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> response = http.get("/open/x", "key-open");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue(RateLimitHeaders.LIMIT)).isEmpty();
        }
        assertThat(upstream.hits("/open/x")).isEqualTo(5);
    }

    @Test
    void aRouteWrittenInJavaTakesItsRouteClassCostAndOptOutFromItsAttributes() throws Exception {
        HttpResponse<String> first = http.get("/java/reports/daily", "key-java");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue(RateLimitHeaders.RATE_LIMIT).orElseThrow())
                .as("the reports class's rule, at cost 2").contains("\"reports\";r=2;");
        assertThat(http.get("/java/reports/daily", "key-java").statusCode()).isEqualTo(200);
        assertThat(http.get("/java/reports/daily", "key-java").statusCode()).isEqualTo(429);
        assertThat(upstream.hits("/java/reports/daily")).isEqualTo(2);

        for (int i = 0; i < 5; i++) {
            HttpResponse<String> open = http.get("/java/open/x", "key-java");
            assertThat(open.statusCode()).as("opted out, though rule 'three' names the route").isEqualTo(200);
            assertThat(open.headers().firstValue(RateLimitHeaders.LIMIT)).isEmpty();
        }
        assertThat(upstream.hits("/java/open/x")).isEqualTo(5);
    }

    @Test
    void aConcurrencyPermitIsHeldWhileTheResponseIsOutAndGivenBackAfterIt() throws Exception {
        upstream.delay(Duration.ofMillis(800));
        CompletableFuture<HttpResponse<String>> slow = http.getLater("/held/slow", "key-held");
        awaitInFlight(1);

        HttpResponse<String> second = http.get("/held/fast", "key-held");

        assertThat(second.statusCode()).isEqualTo(429);
        assertThat(json.readTree(second.body()).get("error").asString()).isEqualTo("too_many_in_progress");
        assertThat(slow.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        upstream.delay(Duration.ZERO);
        for (int i = 0; i < 3; i++) {
            // The client has the whole response a moment before the servlet is done with the request.
            awaitPermitsBack();
            assertThat(http.get("/held/fast", "key-held").statusCode()).as("permit back after response " + i)
                    .isEqualTo(200);
        }
        assertThat(upstream.hits("/held/fast")).isEqualTo(3);
    }

    @Test
    void aConcurrencyPermitIsGivenBackAfterTheUpstreamFailed() throws Exception {
        for (int i = 0; i < 3; i++) {
            awaitPermitsBack();
            HttpResponse<String> response = http.get("/broken/x", "key-broken");
            assertThat(response.statusCode()).as("request " + i + " failed upstream, not limited")
                    .isGreaterThanOrEqualTo(500);
            assertThat(response.headers().firstValue(RateLimitHeaders.LIMIT)).hasValue("1");
        }
    }

    /** Waits, 5 s at most, until Redis holds no concurrency permit, and says if one is still held then. */
    private static void awaitPermitsBack() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (permitsHeld() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(permitsHeld()).as("permits held in Redis").isZero();
    }

    /** Members of the concurrency buckets (sorted sets under rl:, the instance heartbeats aside). */
    private static long permitsHeld() {
        long held = 0;
        for (String key : fixture.redis().command("KEYS", "rl:*").split("\n")) {
            if (!key.isBlank() && !key.contains("{instances}")
                    && "zset".equals(fixture.redis().command("TYPE", key).trim())) {
                held += Long.parseLong(fixture.redis().command("ZCARD", key).trim());
            }
        }
        return held;
    }

    private static void awaitInFlight(int expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (upstream.inFlight() < expected) {
            assertThat(System.nanoTime()).as("the upstream got the slow request").isLessThan(deadline);
            Thread.sleep(10);
        }
    }
}

package dev.ratelimiter.gateway;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.testsupport.RawResponse;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rules as data through the whole gateway: several rules per request, a per-endpoint cap, shadow mode, the kill
 * switch, tier enforcement and refused rule changes, against a real Redis and a counting stub upstream.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RulesIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    WebTestClient client;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("management.endpoints.web.exposure.include", () -> "health,ratelimit,ratelimitcontrol");
        registry.add("management.endpoint.health.show-details", () -> "always");
        route(registry, 0, "api", "/api/**");
        route(registry, 1, "quota", "/quota/**");
        route(registry, 2, "login", "/login/**");
        route(registry, 3, "shadowed", "/shadowed/**");
        route(registry, 4, "local", "/local/**");
        // A local-mode rule: decided from this instance's share, settled with Redis every 100 ms.
        registry.add("ratelimit.rules.local-burst.group", () -> "tier-default");
        registry.add("ratelimit.rules.local-burst.match.route-ids[0]", () -> "local");
        registry.add("ratelimit.rules.local-burst.store-mode", () -> "local");
        registry.add("ratelimit.rules.local-burst.capacity", () -> "5");
        registry.add("ratelimit.rules.local-burst.refill-tokens", () -> "1");
        registry.add("ratelimit.rules.local-burst.refill-period", () -> "1h");
        registry.add("ratelimit.store.type", () -> "redis");
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.default-tier", () -> "free");
        // A roomy per-client bucket everywhere...
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "50");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "50");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
        registry.add("ratelimit.tiers.trial.api-keys[0]", () -> "trial-key");
        registry.add("ratelimit.tiers.trial.limits.default.capacity", () -> "2");
        registry.add("ratelimit.tiers.trial.limits.default.refill-tokens", () -> "1");
        registry.add("ratelimit.tiers.trial.limits.default.refill-period", () -> "1h");
        // ...an hourly quota on the quota route...
        registry.add("ratelimit.rules.hourly.algorithm", () -> "sliding-window");
        registry.add("ratelimit.rules.hourly.limit", () -> "8");
        registry.add("ratelimit.rules.hourly.window", () -> "1h");
        registry.add("ratelimit.rules.hourly.match.route-ids[0]", () -> "quota");
        // ...a cap on the login endpoint summed over every client...
        registry.add("ratelimit.rules.login-cap.key[0]", () -> "route");
        registry.add("ratelimit.rules.login-cap.match.route-ids[0]", () -> "login");
        registry.add("ratelimit.rules.login-cap.capacity", () -> "100");
        registry.add("ratelimit.rules.login-cap.refill-tokens", () -> "1");
        registry.add("ratelimit.rules.login-cap.refill-period", () -> "1h");
        // ...and a rule only watched, not enforced.
        registry.add("ratelimit.rules.watch.match.route-ids[0]", () -> "shadowed");
        registry.add("ratelimit.rules.watch.capacity", () -> "3");
        registry.add("ratelimit.rules.watch.refill-tokens", () -> "1");
        registry.add("ratelimit.rules.watch.refill-period", () -> "1h");
        registry.add("ratelimit.rules.watch.mode", () -> "shadow");
    }

    private static void route(DynamicPropertyRegistry registry, int index, String id, String path) {
        fixture.route(registry, index, id, path);
    }

    @BeforeEach
    void reset() {
        client = GatewayInstance.client(port);
        control(Map.of("killSwitch", false)).expectStatus().isOk();
    }

    @Test
    void aRequestMustPassTheBucketAndTheHourlyQuota() {
        for (int i = 0; i < 8; i++) {
            EntityExchangeResult<String> allowed = get("/quota/report", "q1");
            assertThat(allowed.getStatus().value()).isEqualTo(200);
            assertThat(allowed.getResponseHeaders().getFirst("RateLimit-Policy"))
                    .isEqualTo("\"free.default\";q=50;w=3600, \"hourly\";q=8;w=3600");
        }
        EntityExchangeResult<String> denied = get("/quota/report", "q1");
        assertThat(denied.getStatus().value()).isEqualTo(429);
        assertThat(denied.getResponseBody()).contains("\"policy\":\"hourly\"");
        assertThat(denied.getResponseHeaders().getFirst("X-RateLimit-Limit")).isEqualTo("8");
        assertThat(Long.parseLong(denied.getResponseHeaders().getFirst("Retry-After"))).isGreaterThan(60);
        assertThat(get("/api/other", "q1").getResponseHeaders().getFirst("X-RateLimit-Remaining"))
                .as("the bucket still has tokens: the quota denied, and nothing was spent by the denial")
                .isEqualTo("41");
        assertThat(upstream.hits("/quota/report")).isEqualTo(8);
    }

    @Test
    void aLocalModeRuleLimitsWithoutAStoreCallPerRequestAndSettlesWithRedis() {
        int allowed = 0;
        for (int i = 0; i < 20; i++) {
            allowed += get("/local/x", "local-client").getStatus().value() == 200 ? 1 : 0;
        }
        assertThat(allowed).as("a burst of 5, however the share is split").isEqualTo(5);
        Load.sleep(Duration.ofMillis(300));
        assertThat(redis.command("KEYS", "rl:*:local-burst@t")).as("the share was settled with Redis").isNotBlank();
        assertThat(get("/local/x", "local-client").getStatus().value()).isEqualTo(429);
    }

    @Test
    void aPerEndpointCapHoldsManyKeysEachUnderItsOwnLimit() {
        int allowed = 0;
        for (int key = 0; key < 200; key++) {
            for (int i = 0; i < 2; i++) {
                allowed += get("/login/attempt", "bot-" + key).getStatus().value() == 200 ? 1 : 0;
            }
        }
        assertThat(allowed).as("400 requests from 200 keys, each far under its own limit").isBetween(100, 110);
        assertThat(upstream.hits("/login/attempt")).isEqualTo(allowed);
    }

    @Test
    void aShadowRuleNeverDeniesButCountsItsWouldBeDenials() {
        double before = shadowDenials();
        for (int i = 0; i < 10; i++) {
            EntityExchangeResult<String> result = get("/shadowed/x", "watched");
            assertThat(result.getStatus().value()).isEqualTo(200);
            assertThat(result.getResponseHeaders().getFirst("RateLimit-Policy")).doesNotContain("watch");
        }
        assertThat(shadowDenials() - before).isEqualTo(7);
    }

    @Test
    void theKillSwitchAllowsEverythingAndLeavesStateIntact() {
        for (int i = 0; i < 8; i++) {
            get("/quota/x", "ks");
        }
        assertThat(get("/quota/x", "ks").getStatus().value()).isEqualTo(429);
        control(Map.of("killSwitch", true)).expectStatus().isOk();
        for (int i = 0; i < 20; i++) {
            assertThat(get("/quota/x", "ks").getStatus().value()).isEqualTo(200);
        }
        control(Map.of("killSwitch", false)).expectStatus().isOk();
        EntityExchangeResult<String> after = get("/quota/x", "ks");
        assertThat(after.getStatus().value()).as("limits are back, and the quota was not reset").isEqualTo(429);
        assertThat(upstream.hits("/quota/x")).isEqualTo(28);
    }

    @Test
    void onTheSharedLoopbackPortAnotherHostNameReachesTheRoutesButNotTheOperatorEndpoints() throws IOException {
        String evil = "Host: evil.example:" + port;
        RawResponse kill = RawResponse.send(port, "POST", "/actuator/ratelimitcontrol", "application/json",
                "{\"killSwitch\": true}".getBytes(StandardCharsets.UTF_8), evil);
        assertThat(kill.status()).isEqualTo(403);
        assertThat(kill.body()).contains("\"error\":\"host_not_loopback\"");
        for (String path : List.of("/actuator/ratelimitcontrol/", "//actuator/ratelimitcontrol",
                "/actuator//ratelimitcontrol", "/actuator/ratelimitcontrol;x=1", "/actuator/%72atelimitcontrol",
                "/ACTUATOR/ratelimitcontrol", "/actuator/./ratelimitcontrol", "/actuator/health/../ratelimitcontrol",
                "/actuator/health/%2e%2e/ratelimitcontrol")) {
            assertThat(RawResponse.send(port, "POST", path, "application/json",
                    "{\"killSwitch\": true}".getBytes(StandardCharsets.UTF_8), evil).status()).as(path)
                    .isNotEqualTo(200);
        }
        assertThat(RawResponse.send(port, "GET", "/actuator/ratelimit", null, new byte[0], evil).status())
                .isEqualTo(403);
        // the gateway's own traffic is not the operator's: a proxy in front may keep the client's Host
        assertThat(RawResponse.send(port, "GET", "/api/x", null, new byte[0], evil, "X-API-Key: rebound").status())
                .isEqualTo(200);
        assertThat(client.get().uri("/actuator/ratelimit").exchange().expectBody(String.class).returnResult()
                .getResponseBody()).as("the kill switch stayed off").contains("\"killSwitch\":false");
    }

    @Test
    void aTierCanBePutInShadowAndBack() {
        assertThat(get("/api/x", "trial-key").getStatus().value()).isEqualTo(200);
        assertThat(get("/api/x", "trial-key").getStatus().value()).isEqualTo(200);
        assertThat(get("/api/x", "trial-key").getStatus().value()).isEqualTo(429);
        control(Map.of("tier", "trial", "enforce", false)).expectStatus().isOk();
        assertThat(get("/api/x", "trial-key").getStatus().value()).isEqualTo(200);
        control(Map.of("tier", "trial", "enforce", true)).expectStatus().isOk();
        assertThat(get("/api/x", "trial-key").getStatus().value()).isEqualTo(429);
    }

    @Test
    void aBadRuleIsRefusedWithTheFieldAndReasonAndTheRulesInForceStay() {
        client.post().uri("/actuator/ratelimit/hourly").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("algorithm", "sliding-window", "limit", -5, "window", "1h"))
                .exchange()
                .expectStatus().isBadRequest()
                .expectBody()
                .jsonPath("$.error").isEqualTo("invalid_rule")
                .jsonPath("$.field").isEqualTo("ratelimit.rules.hourly.limit")
                .jsonPath("$.reason").isEqualTo("ratelimit.rules.hourly.limit must be at least 1 (requests allowed "
                        + "per window), but was -5.");
        client.post().uri("/actuator/ratelimit/hourly").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("capacity", "lots", "refillTokens", 5))
                .exchange()
                .expectStatus().isBadRequest()
                .expectBody()
                .jsonPath("$.field").isEqualTo("ratelimit.rules.hourly.capacity")
                .jsonPath("$.reason").value(reason -> assertThat(reason.toString()).contains("lots"));
        client.post().uri("/actuator/ratelimit/hourly").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("key", "api-key,shoe-size", "capacity", 5, "refillTokens", 5))
                .exchange()
                .expectStatus().isBadRequest()
                .expectBody().jsonPath("$.field").isEqualTo("ratelimit.rules.hourly.key")
                .jsonPath("$.reason").value(reason -> assertThat(reason.toString()).contains("shoe-size"));
        for (int i = 0; i < 8; i++) {
            get("/quota/y", "bad-rule");
        }
        assertThat(get("/quota/y", "bad-rule").getStatus().value()).as("the hourly quota is still 8").isEqualTo(429);
        client.get().uri("/actuator/ratelimit/hourly").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.limit").isEqualTo(8).jsonPath("$.source").isEqualTo("configuration");
    }

    @Test
    void changingALimitAtRuntimeKeepsTheBucketsState() {
        for (int i = 0; i < 3; i++) {
            get("/quota/z", "changer");
        }
        client.post().uri("/actuator/ratelimit/hourly").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("algorithm", "sliding-window", "limit", 10, "window", "1h", "matchRouteIds", "quota"))
                .exchange().expectStatus().isOk();
        try {
            EntityExchangeResult<String> after = get("/quota/z", "changer");
            assertThat(after.getResponseHeaders().getFirst("RateLimit-Policy")).contains("\"hourly\";q=10;w=3600");
            assertThat(after.getResponseHeaders().getFirst("X-RateLimit-Remaining"))
                    .as("the three earlier requests still count under the new limit").isEqualTo("6");
        }
        finally {
            client.delete().uri("/actuator/ratelimit/hourly").exchange().expectStatus().isOk();
        }
        client.get().uri("/actuator/ratelimit/hourly").exchange().expectBody()
                .jsonPath("$.limit").isEqualTo(8).jsonPath("$.source").isEqualTo("configuration");
    }

    @Test
    void aRuleCanBeSwitchedOffAtRuntimeAndBackOnWithItsStateKept() {
        for (int i = 0; i < 8; i++) {
            assertThat(get("/quota/s", "switcher").getStatus().value()).isEqualTo(200);
        }
        assertThat(get("/quota/s", "switcher").getStatus().value()).isEqualTo(429);
        client.post().uri("/actuator/ratelimit/hourly").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("enabled", false)).exchange().expectStatus().isOk();
        try {
            client.get().uri("/actuator/ratelimit").exchange().expectBody()
                    .jsonPath("$.rules.hourly").doesNotExist()
                    .jsonPath("$.rules['free.default'].storeMode").isEqualTo("EXACT");
            EntityExchangeResult<String> off = get("/quota/s", "switcher");
            assertThat(off.getStatus().value()).isEqualTo(200);
            assertThat(off.getResponseHeaders().getFirst("RateLimit-Policy")).doesNotContain("hourly");
        }
        finally {
            client.delete().uri("/actuator/ratelimit/hourly").exchange().expectStatus().isOk();
        }
        assertThat(get("/quota/s", "switcher").getStatus().value()).as("back on, with its count kept")
                .isEqualTo(429);
    }

    @Test
    void configuredRulesCannotBeDeletedOnlyReplaced() {
        client.delete().uri("/actuator/ratelimit/hourly").exchange().expectStatus().isEqualTo(409);
        client.delete().uri("/actuator/ratelimit/no-such-rule").exchange().expectStatus().isNotFound();
    }

    @Test
    void theEndpointListsRulesVersionAndSwitchesAndHealthShowsTheRuleStore() {
        client.get().uri("/actuator/ratelimit").exchange().expectStatus().isOk()
                .expectBody()
                .jsonPath("$.killSwitch").isEqualTo(false)
                .jsonPath("$.ruleStore.state").isEqualTo("IN_SYNC")
                .jsonPath("$.rules['login-cap'].key[0]").isEqualTo("ROUTE")
                .jsonPath("$.rules['free.default'].group").isEqualTo("tier-default")
                .jsonPath("$.version").isNumber();
        client.get().uri("/actuator/health").exchange().expectStatus().isOk()
                .expectBody()
                .jsonPath("$.status").isEqualTo("UP")
                .jsonPath("$.components.rateLimit.details.ruleStore").isEqualTo("IN_SYNC");
    }

    private WebTestClient.ResponseSpec control(Map<String, Object> body) {
        return client.post().uri("/actuator/ratelimitcontrol").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange();
    }

    private double shadowDenials() {
        var counter = meters.find("ratelimit.shadow.denials").tag("rule", "watch").counter();
        return counter == null ? 0 : counter.count();
    }

    private EntityExchangeResult<String> get(String path, String apiKey) {
        return client.get().uri(path).header("X-API-Key", apiKey).exchange().expectBody(String.class).returnResult();
    }
}

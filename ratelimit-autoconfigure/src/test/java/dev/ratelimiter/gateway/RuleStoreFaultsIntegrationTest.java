package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.StoreBreaker;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
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
 * Live rule changes and a rule store in a bad state, through the whole gateway on a real Redis: a rule that changes
 * algorithm, a stored rule that does not validate, limits too large to store, a clock that steps back, and shares too
 * small for one request. Each of these once broke decisions, or kept the kill switch from working.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RuleStoreFaultsIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEach();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    @LocalServerPort
    int port;

    @Autowired
    RateLimitStore store;

    @Autowired
    MeterRegistry meters;

    WebTestClient client;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("management.endpoints.web.exposure.include", () -> "ratelimit,ratelimitcontrol");
        registry.add("ratelimit.store.type", () -> "redis");
        // Long enough that nothing times out on a loaded machine: every store error counted here is a real error.
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.rule-store.poll-interval", () -> "200ms");
        fixture.route(registry, 0, "api", "/api/**");
        fixture.route(registry, 1, "costly", "/costly/**");
        registry.add("spring.cloud.gateway.server.webflux.routes[1].metadata.ratelimit-cost", () -> "10");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "5");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
    }

    @BeforeEach
    void reset() {
        client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(10)).build();
        awaitRulesVersion(0);
    }

    @Test
    void aRuleThatChangesAlgorithmLiveNeverMeetsStateOfAnotherShape() {
        double errorsBefore = storeErrors();
        // The customer's own rule in place of its tier's: nothing else limits these requests.
        Map<String, Object> bucket = rule("capacity", 100, "refillTokens", 100, "refillPeriod", "1h");
        Map<String, Object> concurrency = rule("algorithm", "concurrency", "maxInProgress", 5);
        Map<String, Object> window = rule("algorithm", "sliding-window", "limit", 3, "window", "1h");
        java.util.List<Map<String, Object>> specs = java.util.List.of(bucket, concurrency, window, bucket, window,
                concurrency);
        // Sequential requests: the bucket and the concurrency cap allow all ten; the window its 3, and the second
        // time nothing: the same shape finds its own state again.
        int[] expected = { 10, 10, 3, 10, 0, 10 };
        for (int round = 0; round < specs.size(); round++) {
            Map<String, Object> spec = new LinkedHashMap<>(specs.get(round));
            spec.put("group", "tier-default");
            spec.put("matchApiKeys", "flipper");
            put("flip", spec).expectStatus().isOk();
            int allowed = 0;
            for (int i = 0; i < 10; i++) {
                int status = get("/api/flip", "flipper");
                assertThat(status).isIn(200, 429);
                allowed += status == 200 ? 1 : 0;
            }
            assertThat(allowed).as("allowed of 10 under " + specs.get(round)).isEqualTo(expected[round]);
        }
        assertThat(storeErrors() - errorsBefore).as("store calls that failed (WRONGTYPE before)").isZero();
        assertThat(store.find(FailSafeStore.class).orElseThrow().breaker().state())
                .isEqualTo(StoreBreaker.State.CLOSED);
        assertThat(store.find(FailSafeStore.class).orElseThrow().fallbackDecisions()).isZero();
    }

    @Test
    void theKillSwitchWorksWhileTheStoreHoldsARuleThatDoesNotValidate() {
        for (int i = 0; i < 5; i++) {
            get("/api/ks", "exhausted");
        }
        assertThat(get("/api/ks", "exhausted")).isEqualTo(429);
        // An operator (or a bug) writes a rule by hand that no validation saw, bumps the version and announces it.
        redis.command("HSET", "rl:{rules}:specs", "broken", "algorithm=token-bucket\ncapacity=-1\n");
        String version = redis.command("INCR", "rl:{rules}:version").trim();
        redis.command("PUBLISH", "rl:rules:changed", version);
        awaitRuleStore("STORE_INVALID");

        client.post().uri("/actuator/ratelimitcontrol").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("killSwitch", true)).exchange()
                .expectStatus().isOk().expectBody().jsonPath("$['kill-switch']").isEqualTo(true);
        for (int i = 0; i < 10; i++) {
            assertThat(get("/api/ks", "exhausted")).as("hard-allowed by the kill switch").isEqualTo(200);
        }
        client.get().uri("/actuator/ratelimit").exchange().expectBody()
                .jsonPath("$.killSwitch").isEqualTo(true)
                .jsonPath("$.ruleStore.state").isEqualTo("STORE_INVALID")
                .jsonPath("$.ruleStore.problem").value(problem -> assertThat(problem.toString())
                        .contains("ratelimit.rules.broken.capacity"));

        // A valid rule can still not be added next to the broken one, and says why; deleting the broken one works.
        put("fine", rule("capacity", 10, "refillTokens", 10)).expectStatus().isEqualTo(409)
                .expectBody().jsonPath("$.error").isEqualTo("rule_store_invalid")
                .jsonPath("$.reason").value(reason -> assertThat(reason.toString()).contains("'broken'"));
        client.delete().uri("/actuator/ratelimit/broken").exchange().expectStatus().isOk();
        awaitRuleStore("IN_SYNC");
        client.post().uri("/actuator/ratelimitcontrol").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("killSwitch", false)).exchange().expectStatus().isOk();
        assertThat(get("/api/ks", "exhausted")).as("limits are back").isEqualTo(429);
    }

    /**
     * A kill switch Redis does not answer in time was sent all the same, and comes on when Redis answers again: the
     * operator was once told "nothing changed". The answer must say the switch may or may not be on.
     */
    @Test
    void aSwitchWriteThatTimesOutIsAnsweredAsMaybeAppliedAndIsInForceOnceRedisAnswers() {
        // Redis knows the write script first (a fresh Redis does not): sent by SHA, a script Redis does not know is
        // answered NOSCRIPT on resuming and sent again by body only if Lettuce (2 s) has not given up on the first
        // call by then, so whether the switch comes on would depend on how long the pause lasted.
        client.post().uri("/actuator/ratelimitcontrol").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("killSwitch", false)).exchange().expectStatus().isOk();
        EntityExchangeResult<String> timedOut;
        redis.server().pause();
        try {
            timedOut = client.post().uri("/actuator/ratelimitcontrol").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("killSwitch", true)).exchange().expectBody(String.class).returnResult();
        }
        finally {
            redis.server().resume();
        }
        assertThat(timedOut.getStatus().value()).as(timedOut.getResponseBody()).isEqualTo(503);
        assertThat(timedOut.getResponseBody()).contains("\"error\":\"rule_store_outcome_unknown\"")
                .contains("may or may not have been applied").doesNotContain("nothing changed");
        // what the answer warned of: the switch reached Redis and is on now that it answers
        awaitKillSwitch();
        client.post().uri("/actuator/ratelimitcontrol").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("killSwitch", false)).exchange().expectStatus().isOk();
    }

    /**
     * Redis gone (killed) once the connection was open: Lettuce keeps a command written meanwhile to send when it
     * reconnects, so this too is a write whose outcome is unknown, never "nothing changed".
     */
    @Test
    void aSwitchWriteWhileRedisIsDownIsAnsweredAsMaybeApplied() {
        redis.server().kill();
        EntityExchangeResult<String> unanswered;
        try {
            unanswered = client.post().uri("/actuator/ratelimitcontrol").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("killSwitch", true)).exchange().expectBody(String.class).returnResult();
        }
        finally {
            redis.server().restart();
        }
        // whatever Lettuce still held goes first on the reconnected connection: the switch written off after it
        // stays off for the other tests
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        int off;
        do {
            off = client.post().uri("/actuator/ratelimitcontrol").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("killSwitch", false)).exchange().expectBody(String.class).returnResult()
                    .getStatus().value();
        } while (off != 200 && System.nanoTime() < deadline);
        assertThat(unanswered.getStatus().value()).as(unanswered.getResponseBody()).isEqualTo(503);
        assertThat(unanswered.getResponseBody()).contains("\"error\":\"rule_store_outcome_unknown\"")
                .doesNotContain("nothing changed");
        assertThat(off).as("the switch written off once Redis is back").isEqualTo(200);
    }

    @Test
    void limitsTooLargeToStoreAreRefusedNamingTheSettingAndNothingIsWritten() {
        put("huge", rule("capacity", Long.MAX_VALUE, "refillTokens", 1, "refillPeriod", "1s"))
                .expectStatus().isBadRequest().expectBody()
                .jsonPath("$.field").isEqualTo("ratelimit.rules.huge.capacity")
                .jsonPath("$.reason").value(reason -> assertThat(reason.toString()).contains("at most 1000000000000"));
        put("slow-fill", rule("capacity", 1_000_000, "refillTokens", 1, "refillPeriod", "1h"))
                .expectStatus().isBadRequest().expectBody()
                .jsonPath("$.reason").value(reason -> assertThat(reason.toString()).contains("to fill"));
        put("long-window", rule("algorithm", "sliding-window", "limit", 5, "window", "400d"))
                .expectStatus().isBadRequest().expectBody()
                .jsonPath("$.field").isEqualTo("ratelimit.rules.long-window.window");
        assertThat(redis.command("HLEN", "rl:{rules}:specs").trim()).isEqualTo("0");
        assertThat(get("/api/huge", "huge-client")).isEqualTo(200);
        assertThat(keysWithoutTtl()).as("every key the limiter wrote expires").isZero();
    }

    @Test
    void aStoreClockThatStepsBackGivesNoFreshQuota() {
        for (int i = 0; i < 3; i++) {
            assertThat(get("/api/clock", "clock-client")).isEqualTo(200);
        }
        // The bucket was last refilled 3 s "in the future" of the store's clock: a failover to a server whose clock
        // is 3 s behind. Two tokens are left; the 3 s must not be credited again.
        String key = "rl:{" + ClientIds.unkeyed().of("clock-client") + "}:free.default@t";
        String[] time = redis.command("TIME").trim().split("\\s+");
        long nowMicros = Long.parseLong(time[0]) * 1_000_000 + Long.parseLong(time[1]);
        redis.command("HSET", key, "ts", String.valueOf(nowMicros + 3_000_000));
        assertThat(get("/api/clock", "clock-client")).isEqualTo(200);
        assertThat(redis.command("HGET", key, "ts").trim()).as("the bucket's time does not move back")
                .isEqualTo(String.valueOf(nowMicros + 3_000_000));
        redis.command("HSET", key, "ts", String.valueOf(nowMicros - 10_000));
        assertThat(get("/api/clock", "clock-client")).isEqualTo(200);
        assertThat(get("/api/clock", "clock-client")).as("a refill of 1 per hour: the bucket is empty")
                .isEqualTo(429);
    }

    @Test
    void sharesAreNeverTooSmallForOneRequest() {
        put("sharded", rule("key", "route", "capacity", 100, "refillTokens", 100, "cost", 10, "shards", 16,
                "matchRouteIds", "costly")).expectStatus().isBadRequest().expectBody()
                .jsonPath("$.field").isEqualTo("ratelimit.rules.sharded.shards")
                .jsonPath("$.reason").value(reason -> assertThat(reason.toString()).contains("at most 10 shards"));
        // The route's cost (10) is only known per request: each shard then holds one request's worth.
        put("sharded", rule("key", "route", "capacity", 100, "refillTokens", 100, "shards", 16,
                "matchRouteIds", "costly", "group", "tier-default")).expectStatus().isOk();
        int allowed = 0;
        for (int i = 0; i < 30; i++) {
            allowed += get("/costly/x", "caller-" + i) == 200 ? 1 : 0;
        }
        assertThat(allowed).as("requests of cost 10 through 16 shards of a capacity of 100").isPositive();
    }

    private WebTestClient.ResponseSpec put(String id, Map<String, Object> spec) {
        return client.post().uri("/actuator/ratelimit/" + id).contentType(MediaType.APPLICATION_JSON).bodyValue(spec)
                .exchange();
    }

    private static Map<String, Object> rule(Object... pairs) {
        Map<String, Object> spec = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            spec.put((String) pairs[i], pairs[i + 1]);
        }
        return spec;
    }

    private int get(String path, String apiKey) {
        return client.get().uri(path).header("X-API-Key", apiKey).exchange().expectBody(String.class).returnResult()
                .getStatus().value();
    }

    private double storeErrors() {
        Timer errors = meters.find("ratelimit.store.calls").tag("outcome", "error").timer();
        return errors == null ? 0 : errors.count();
    }

    private static long keysWithoutTtl() {
        long count = 0;
        for (String key : redis.command("KEYS", "rl:*").split("\n")) {
            if (!key.isBlank() && !key.startsWith("rl:{rules}") && "-1".equals(redis.command("PTTL", key).trim())) {
                count++;
            }
        }
        return count;
    }

    private void awaitRuleStore(String state) {
        awaitView("\"state\":\"" + state + "\"", "the rule store never became " + state);
    }

    private void awaitKillSwitch() {
        awaitView("\"killSwitch\":true", "the kill switch never came on");
    }

    private void awaitRulesVersion(long version) {
        awaitView("\"version\":" + version + ",", "the rules never came back to version " + version);
    }

    /** Until the actuator view holds {@code fragment}, for at most 10 s. */
    private void awaitView(String fragment, String failure) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            String body = client.get().uri("/actuator/ratelimit").exchange().expectBody(String.class).returnResult()
                    .getResponseBody();
            if (body != null && body.contains(fragment)) {
                return;
            }
            Load.sleep(Duration.ofMillis(50));
        }
        throw new AssertionError(failure);
    }
}

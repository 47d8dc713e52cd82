package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.DecisionEvent;
import dev.ratelimiter.core.DecisionEventJson;
import dev.ratelimiter.core.RecentDecisions;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Against a real Redis, through the actuator endpoint: a customer override leaves its API key nowhere (Redis, decision
 * events, the actuator view), still applies, and survives a rotation of the client-id secret as the operator notes
 * describe it.
 */
class ApiKeysInRedisTest {

    static final String OLD_SECRET = "the-old-client-id-secret-0123";
    static final String NEW_SECRET = "the-new-client-id-secret-4567";

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    @Test
    void aPostedOverrideLeavesItsKeyNowhereInRedisTheEventsOrTheViewAndStillApplies() {
        ClientIds ids = ClientIds.keyed("s", NEW_SECRET);
        try (ConfigurableApplicationContext gateway = start("ratelimit.client-id.secret=" + NEW_SECRET)) {
            WebTestClient client = GatewayInstance.client(gateway);
            boost(client, "acme-key");
            assertThat(limitSeenBy(client, "acme-key")).as("the override applies").isEqualTo("20");
            assertThat(limitSeenBy(client, "globex-key")).as("to that customer alone").isEqualTo("5");
            for (int i = 0; i < 25; i++) {
                limitSeenBy(client, "acme-key"); // some denied, so that the view's most denied clients list acme
            }

            String stored = contents();
            assertThat(redis.command("HGETALL", "rl:{rules}:specs")).contains(ids.hashed("acme-key").toString());
            assertThat(stored).contains("rl:{" + ids.of("acme-key") + "}:tier-default-boost@t")
                    .doesNotContain("acme-key").doesNotContain("globex-key");

            RecentDecisions recent = gateway.getBean(RecentDecisions.class);
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (recent.latest(1000).size() < 27 && System.nanoTime() < deadline) {
                Load.sleep(Duration.ofMillis(20)); // the event queue drains on its own thread
            }
            List<DecisionEvent> events = recent.latest(1000);
            assertThat(events).extracting(DecisionEvent::client).contains(ids.of("acme-key"), ids.of("globex-key"));
            assertThat(events).allSatisfy(event -> assertThat(DecisionEventJson.write(event))
                    .doesNotContain("acme-key").doesNotContain("globex-key"));

            String view = body(client, "/actuator/ratelimit");
            assertThat(view).contains(ids.of("acme-key")).contains(ids.hashed("acme-key").toString())
                    .doesNotContain("acme-key");
            assertThat(body(client, "/actuator/ratelimit/tier-default-boost")).doesNotContain("acme-key");
            assertThat(body(client, "/actuator/health/rateLimit")).doesNotContain("acme-key")
                    .doesNotContain("ruleApiKeys");
        }
    }

    @Test
    void twoSecretsGiveOneClientTwoBucketsThatShareNothing() {
        try (ConfigurableApplicationContext first = start("ratelimit.client-id.secret=" + OLD_SECRET);
                ConfigurableApplicationContext second = start("ratelimit.client-id.secret=" + NEW_SECRET)) {
            assertThat(remainingSeenBy(GatewayInstance.client(first), "shared-key")).isEqualTo("4");
            assertThat(remainingSeenBy(GatewayInstance.client(second), "shared-key"))
                    .as("its own bucket, not the first instance's").isEqualTo("4");
            assertThat(buckets()).containsExactlyInAnyOrder(
                    "rl:{" + ClientIds.keyed("s", OLD_SECRET).of("shared-key") + "}:free.default@t",
                    "rl:{" + ClientIds.keyed("s", NEW_SECRET).of("shared-key") + "}:free.default@t");
            assertThat(contents()).doesNotContain("shared-key");
        }
    }

    @Test
    void anOverrideHashedUnderThePreviousSecretKeepsApplyingAndIsReportedOnceThatSecretIsDropped() {
        try (ConfigurableApplicationContext before = start("ratelimit.client-id.secret=" + OLD_SECRET)) {
            boost(GatewayInstance.client(before), "acme-key");
        }
        try (ConfigurableApplicationContext rotating = start("ratelimit.client-id.secret=" + NEW_SECRET,
                "ratelimit.client-id.previous-secret=" + OLD_SECRET)) {
            WebTestClient client = GatewayInstance.client(rotating);
            assertThat(limitSeenBy(client, "acme-key")).as("matched through the previous secret").isEqualTo("20");
            assertThat(limitSeenBy(client, "globex-key")).isEqualTo("5");
            assertThat(body(client, "/actuator/health/rateLimit")).contains("ruleApiKeys")
                    .contains("matched only through ratelimit.client-id.previous-secret");
        }
        try (ConfigurableApplicationContext rotated = start("ratelimit.client-id.secret=" + NEW_SECRET)) {
            WebTestClient client = GatewayInstance.client(rotated);
            assertThat(limitSeenBy(client, "acme-key")).as("the previous secret is gone").isEqualTo("5");
            assertThat(body(client, "/actuator/health/rateLimit"))
                    .contains("hashed under a secret this instance does not have ("
                            + ClientIds.keyed("s", OLD_SECRET).scheme() + "), matching no request");

            boost(client, "acme-key"); // posted again, with the key as sent
            assertThat(limitSeenBy(client, "acme-key")).isEqualTo("20");
            assertThat(body(client, "/actuator/health/rateLimit")).doesNotContain("ruleApiKeys");
            assertThat(contents()).doesNotContain("acme-key");
        }
    }

    private static void boost(WebTestClient client, String apiKey) {
        client.post().uri("/actuator/ratelimit/tier-default-boost").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("group", "tier-default", "matchApiKeys", apiKey, "capacity", 20, "refillTokens", 20,
                        "refillPeriod", "1h"))
                .exchange().expectStatus().isOk();
    }

    private static String limitSeenBy(WebTestClient client, String apiKey) {
        return client.get().uri("/api/x").header("X-API-Key", apiKey).exchange().returnResult(String.class)
                .getResponseHeaders().getFirst("X-RateLimit-Limit");
    }

    private static String remainingSeenBy(WebTestClient client, String apiKey) {
        return client.get().uri("/api/x").header("X-API-Key", apiKey).exchange().returnResult(String.class)
                .getResponseHeaders().getFirst("X-RateLimit-Remaining");
    }

    private static String body(WebTestClient client, String path) {
        return client.get().uri(path).exchange().expectStatus().isOk().expectBody(String.class).returnResult()
                .getResponseBody();
    }

    private static List<String> buckets() {
        // Not the limiter's own keys: its rules, its instances' heartbeats, the start-up probe.
        return redis.command("KEYS", "rl:{*}*").lines()
                .filter(key -> !key.matches("rl:\\{(rules|instances|warmup)}.*")).toList();
    }

    /** Every key in Redis with everything it holds, whatever its type. */
    private static String contents() {
        StringBuilder all = new StringBuilder();
        for (String key : redis.command("KEYS", "*").lines().toList()) {
            String type = redis.command("TYPE", key).trim();
            List<String> read = new ArrayList<>(List.of(key, type));
            read.add(switch (type) {
                case "string" -> redis.command("GET", key);
                case "hash" -> redis.command("HGETALL", key);
                case "set" -> redis.command("SMEMBERS", key);
                case "zset" -> redis.command("ZRANGE", key, "0", "-1", "WITHSCORES");
                case "list" -> redis.command("LRANGE", key, "0", "-1");
                case "stream" -> redis.command("XRANGE", key, "-", "+");
                default -> "";
            });
            all.append(String.join("\n", read)).append('\n');
        }
        return all.toString();
    }

    private static ConfigurableApplicationContext start(String... properties) {
        List<String> all = new ArrayList<>(List.of("management.endpoints.web.exposure.include=health,ratelimit",
                "management.endpoint.health.show-details=always",
                "ratelimit.store.type=redis",
                "ratelimit.store.timeout=2s",
                "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=5",
                "ratelimit.tiers.free.limits.default.refill-tokens=5",
                "ratelimit.tiers.free.limits.default.refill-period=1h"));
        all.addAll(List.of(properties));
        return fixture.start(all.toArray(String[]::new));
    }
}

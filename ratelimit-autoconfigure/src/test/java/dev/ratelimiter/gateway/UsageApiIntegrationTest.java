package dev.ratelimiter.gateway;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.testsupport.RawResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The usage API on a real gateway with real Redis, on its management port: what requests spent is what it reads
 * (limit − N, the reset the refill arithmetic gives), reading changes nothing in Redis (no field, no TTL, no key for a
 * client never seen), the operator accounts guard it as they guard the rules API's reads, every malformed query is a
 * 4xx problem, and a Redis that does not answer is a 503 problem, never a 500.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class UsageApiIntegrationTest {

    static final String ADMIN = basic("ratelimit-admin", "admin-secret-0123");
    static final String VIEWER = basic("ratelimit-viewer", "viewer-secret-0123");
    static final String KEY = "usage-key-never-echoed-1";
    static final String UNSPENT = "usage-key-never-spent-2";

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEach();

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    @Autowired
    ConfigurableApplicationContext context;

    private final JsonMapper json = JsonMapper.builder().build();

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        fixture.route(registry, 0, "api", "/api/**");
        fixture.route(registry, 1, "report", "/report/**");
        registry.add("management.server.port", () -> "0");
        registry.add("management.server.address", () -> "127.0.0.1");
        registry.add("management.endpoints.web.exposure.include", () -> "health,ratelimit");
        registry.add("ratelimit.management.security.enabled", () -> "true");
        registry.add("ratelimit.management.security.admin.password", () -> "admin-secret-0123");
        registry.add("ratelimit.management.security.viewer.password", () -> "viewer-secret-0123");
        registry.add("ratelimit.store.type", () -> "redis");
        registry.add("ratelimit.store.timeout", () -> "1s");
        registry.add("ratelimit.default-tier", () -> "free");
        // the shipped key format (the test kit's defaults turn it off)
        registry.add("ratelimit.api-key.min-length", () -> "8");
        registry.add("ratelimit.api-key.max-length", () -> "256");
        registry.add("ratelimit.api-key.pattern", () -> "[A-Za-z0-9._~+/=-]+");
        registry.add("ratelimit.tiers.free.api-keys[0]", () -> KEY);
        registry.add("ratelimit.tiers.free.api-keys[1]", () -> UNSPENT);
        // 10 tokens, one back every 360 s
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "10");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "10");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
        registry.add("ratelimit.rules.hourly.group", () -> "hourly");
        registry.add("ratelimit.rules.hourly.algorithm", () -> "sliding-window");
        registry.add("ratelimit.rules.hourly.limit", () -> "20");
        registry.add("ratelimit.rules.hourly.window", () -> "1h");
        registry.add("ratelimit.rules.reports.group", () -> "reports");
        registry.add("ratelimit.rules.reports.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.reports.max-in-progress", () -> "3");
        registry.add("ratelimit.rules.reports.match.route-ids[0]", () -> "report");
    }

    @BeforeEach
    void redis() {
        GatewayInstance.awaitRedis(context);
    }

    @Test
    void spendingNRequestsLeavesTheLimitLessNWithTheResetOfTheRefill() throws Exception {
        for (int i = 0; i < 4; i++) {
            RawResponse spent = RawResponse.send(port, "GET", "/api/x", null, new byte[0], "X-API-Key: " + KEY);
            assertThat(spent.status()).isEqualTo(200);
        }
        RawResponse answer = usage("apiKey=" + KEY, VIEWER);
        assertThat(answer.status()).as(answer.body()).isEqualTo(200);
        assertThat(answer.body()).doesNotContain(KEY);
        JsonNode body = json.readTree(answer.body());
        String clientId = context.getBean(ClientIdKeyring.class).current().of(KEY);
        assertThat(body.get("identity").get("client").asString()).isEqualTo(clientId);
        assertThat(body.get("tier").asString()).isEqualTo("free");
        JsonNode bucket = rule(body, "free.default");
        assertThat(bucket.get("algorithm").asString()).isEqualTo("token-bucket");
        assertThat(bucket.get("limit").asLong()).isEqualTo(10);
        assertThat(bucket.get("remaining").asLong()).isEqualTo(6);
        // 4 tokens at 360 s each: whole again in at most 1,440 s, less what refilled since the first request
        assertThat(bucket.get("resetSeconds").asLong()).isBetween(1_380L, 1_440L);
        assertThat(bucket.get("mode").asString()).isEqualTo("enforce");
        assertThat(bucket.get("scope").asString()).isEqualTo("regional");
        assertThat(bucket.get("stored").asBoolean()).isTrue();
        JsonNode window = rule(body, "hourly");
        assertThat(window.get("algorithm").asString()).isEqualTo("sliding-window");
        assertThat(window.get("remaining").asLong()).isEqualTo(16);
        assertThat(window.get("resetSeconds").asLong()).isBetween(3_600L, 7_200L);
        JsonNode skipped = body.get("skipped");
        assertThat(skipped).hasSize(1);
        assertThat(skipped.get(0).get("id").asString()).isEqualTo("reports");
        assertThat(skipped.get(0).get("reason").asString()).contains("route");

        JsonNode byClient = json.readTree(usage("client=" + clientId, VIEWER).body());
        assertThat(rule(byClient, "free.default").get("remaining").asLong()).isEqualTo(6);
        assertThat(rule(byClient, "hourly").get("remaining").asLong()).isEqualTo(16);

        JsonNode onReports = json.readTree(usage("apiKey=" + KEY + "&route=report", VIEWER).body());
        JsonNode reports = rule(onReports, "reports");
        assertThat(reports.get("algorithm").asString()).isEqualTo("concurrency");
        assertThat(reports.get("inProgress").asLong()).isZero();
        assertThat(reports.get("remaining").asLong()).isEqualTo(3);
        assertThat(onReports.get("skipped")).isEmpty();

        JsonNode oneRule = json.readTree(usage("apiKey=" + KEY + "&rule=hourly", VIEWER).body());
        assertThat(oneRule.get("rules")).hasSize(1);
    }

    @Test
    void readingAThousandTimesChangesNoRemainingNoTtlAndMakesNoKey() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(RawResponse.send(port, "GET", "/api/x", null, new byte[0], "X-API-Key: " + KEY).status())
                    .isEqualTo(200);
        }
        List<String> keys = keys();
        assertThat(keys).hasSize(2);
        Map<String, String> before = snapshot(keys);
        String first = usage("apiKey=" + KEY, VIEWER).body();
        for (int i = 0; i < 1_000; i++) {
            RawResponse read = usage(i % 3 == 0 ? "apiKey=" + KEY : i % 3 == 1 ? "apiKey=" + UNSPENT
                    : "apiKey=never-seen-" + i, ADMIN);
            assertThat(read.status()).as(read.body()).isEqualTo(200);
        }
        assertThat(snapshot(keys)).isEqualTo(before);
        assertThat(keys()).isEqualTo(keys);
        JsonNode after = json.readTree(usage("apiKey=" + KEY, VIEWER).body());
        assertThat(rule(after, "free.default").get("remaining").asLong())
                .isEqualTo(rule(json.readTree(first), "free.default").get("remaining").asLong()).isEqualTo(7);
        assertThat(rule(after, "hourly").get("remaining").asLong()).isEqualTo(17);
        JsonNode unseen = json.readTree(usage("apiKey=" + UNSPENT, VIEWER).body());
        assertThat(rule(unseen, "free.default").get("remaining").asLong()).isEqualTo(10);
        assertThat(rule(unseen, "free.default").get("stored").asBoolean()).isFalse();
        assertThat(rule(unseen, "free.default").get("resetSeconds").asLong()).isZero();
    }

    @Test
    void theOperatorAccountsGuardItAsTheyGuardTheRulesApisReads() throws IOException {
        assertThat(usage("apiKey=" + KEY).status()).isEqualTo(401);
        assertThat(usage("apiKey=" + KEY, basic("ratelimit-viewer", "wrong-password-000")).status()).isEqualTo(401);
        assertThat(usage("apiKey=" + KEY, basic("nobody", "viewer-secret-0123")).status()).isEqualTo(401);
        assertThat(usage("apiKey=" + KEY, VIEWER).status()).isEqualTo(200);
        assertThat(usage("apiKey=" + KEY, ADMIN).status()).isEqualTo(200);
        RawResponse write = RawResponse.send(managementPort, "POST", "/v1/usage?apiKey=" + KEY, "application/json",
                "{}".getBytes(StandardCharsets.UTF_8), VIEWER);
        assertThat(write.status()).as("a viewer cannot write anything here").isEqualTo(403);
        RawResponse adminWrite = RawResponse.send(managementPort, "POST", "/v1/usage?apiKey=" + KEY,
                "application/json", "{}".getBytes(StandardCharsets.UTF_8), ADMIN);
        assertThat(adminWrite.status()).isEqualTo(405);
    }

    @Test
    void malformedQueriesAreClear4xxProblemsNever5xx() throws IOException {
        Map<String, Integer> expected = new LinkedHashMap<>();
        expected.put("", 400);
        expected.put("route=api", 400);
        expected.put("apikey=" + KEY, 400);
        expected.put("apiKey=" + KEY + "&apiKey=other", 400);
        expected.put("apiKey=" + KEY + "&client=AAAAAAAAAAAAAAAAAAAAAA", 400);
        expected.put("client=short", 400);
        expected.put("client=" + "A".repeat(23), 400);
        expected.put("apiKey=", 400);
        expected.put("apiKey=" + "k".repeat(300), 400);
        expected.put("user=" + "u".repeat(2_000), 400);
        expected.put("user=a%00b", 400);
        expected.put("user=a%0d%0aX-Injected:%201", 400);
        expected.put("apiKey=" + KEY + "&rule=no-such-rule", 404);
        expected.put("apiKey=" + KEY + "&path=relative", 400);
        List<String> odd = new ArrayList<>(List.of("apiKey=%", "apiKey=%zz", "apiKey=%c3%28", "a=b=c", "&&&", "=x",
                "apiKey=" + KEY + "&path=/..%2f..%2fetc", "apiKey=" + KEY + "&tier=%00", "user=%ff%fe",
                "apiKey=" + KEY + "&route=" + "r".repeat(1_500), "tenant=t&ip=not-an-ip", "apiKey=\u00e9t\u00e9",
                "apiKey=" + "k".repeat(10_000)));
        for (Map.Entry<String, Integer> query : expected.entrySet()) {
            RawResponse answer = usage(query.getKey(), VIEWER);
            assertThat(answer.status()).as(query.getKey() + " → " + answer.body()).isEqualTo(query.getValue());
            assertThat(answer.headers().get("content-type")).as(query.getKey()).contains("application/problem+json");
            assertThat(answer.body()).as(query.getKey()).contains("\"detail\"").doesNotContain(KEY);
        }
        for (String query : odd) {
            RawResponse answer = RawResponse.send(managementPort, "GET", "/v1/usage?" + query, null, new byte[0],
                    VIEWER);
            assertThat(answer.status()).as(query + " → " + answer.body()).isBetween(200, 499);
        }
    }

    @Test
    void theCallersOwnUsageIsNotServedUnlessSwitchedOn() throws IOException {
        RawResponse me = RawResponse.send(port, "GET", "/ratelimit/me", null, new byte[0], "X-API-Key: " + KEY);
        assertThat(me.status()).isEqualTo(404);
    }

    @Test
    void aRedisThatDoesNotAnswerIsA503ProblemNotA500() throws Exception {
        fixture.redis().server().pause();
        try {
            RawResponse answer = usage("apiKey=" + KEY, VIEWER);
            assertThat(answer.status()).as(answer.body()).isEqualTo(503);
            assertThat(answer.headers().get("content-type")).contains("application/problem+json");
            assertThat(answer.headers().get("retry-after")).isEqualTo("1");
            assertThat(json.readTree(answer.body()).get("error").asString()).isEqualTo("store_unavailable");
        }
        finally {
            fixture.redis().server().resume();
        }
    }

    private RawResponse usage(String query, String... headers) throws IOException {
        String encoded = query.replace(KEY, URLEncoder.encode(KEY, StandardCharsets.UTF_8));
        return RawResponse.send(managementPort, "GET", "/v1/usage" + (encoded.isEmpty() ? "" : "?" + encoded), null,
                new byte[0], headers);
    }

    private static JsonNode rule(JsonNode body, String id) {
        for (JsonNode rule : body.get("rules")) {
            if (rule.get("id").asString().equals(id)) {
                return rule;
            }
        }
        throw new AssertionError("no rule " + id + " in " + body);
    }

    private List<String> keys() {
        List<String> keys = new ArrayList<>();
        for (String line : fixture.redis().command("KEYS", "rl:{*").split("\n")) {
            String key = line.trim();
            if (key.startsWith("rl:{") && key.contains("}:")) { // buckets, not the instances' heartbeats
                keys.add(key);
            }
        }
        keys.sort(null);
        return keys;
    }

    /** Each key's fields and absolute expiry (ms): what any write would change. */
    private static Map<String, String> snapshot(List<String> keys) {
        Map<String, String> all = new LinkedHashMap<>();
        for (String key : keys) {
            all.put(key, fixture.redis().command("HGETALL", key) + " "
                    + fixture.redis().command("PEXPIRETIME", key).trim());
        }
        return all;
    }

    private static String basic(String user, String password) {
        return "Authorization: Basic " + Base64.getEncoder()
                .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }
}

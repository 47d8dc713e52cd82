package dev.ratelimiter.gateway;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.testsupport.RawResponse;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static dev.ratelimiter.gateway.RulesApiClient.IF_MATCH;
import static dev.ratelimiter.gateway.RulesApiClient.IF_NONE_MATCH;
import static dev.ratelimiter.gateway.RulesApiClient.ifMatch;
import static dev.ratelimiter.gateway.RulesApiClient.version;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rules API on a management port of its own, authenticated (forced on: tests listen on loopback), over a real
 * Redis: a rule put through it limits the gateway's traffic, reads carry the version as ETag, a stale or missing
 * precondition changes nothing, and every refused document is a problem naming the field with the rules in force
 * unchanged.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RulesApiIntegrationTest {

    static final String ADMIN = "ratelimit-admin";
    static final String ADMIN_PASSWORD = "admin-secret-0123";
    static final String VIEWER = "ratelimit-viewer";
    static final String VIEWER_PASSWORD = "viewer-secret-0123";

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTests();
    static final StubUpstream upstream = fixture.upstream();

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    RulesApiClient api;
    WebTestClient admin;
    WebTestClient viewer;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        fixture.route(registry, 0, "api", "/api/**");
        // an upstream of the same path as the API: the public port routes it, the API never shadows it
        fixture.route(registry, 1, "upstream-rules", "/v1/rules/**");
        registry.add("management.server.port", () -> "0");
        registry.add("management.server.address", () -> "127.0.0.1");
        registry.add("management.endpoints.web.exposure.include", () -> "health,ratelimit");
        registry.add("ratelimit.management.security.enabled", () -> "true");
        registry.add("ratelimit.management.security.admin.password", () -> ADMIN_PASSWORD);
        registry.add("ratelimit.management.security.viewer.password", () -> VIEWER_PASSWORD);
        registry.add("ratelimit.store.type", () -> "redis");
        // a loaded test machine misses the 5 ms default, and the local failure mode's buckets are larger
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "50");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "50");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
        registry.add("ratelimit.tiers.trial.api-keys[0]", () -> "trial-key");
        registry.add("ratelimit.tiers.trial.limits.default.capacity", () -> "50");
        registry.add("ratelimit.tiers.trial.limits.default.refill-tokens", () -> "50");
        registry.add("ratelimit.tiers.trial.limits.default.refill-period", () -> "1h");
        registry.add("ratelimit.rules.configured-cap.key[0]", () -> "route");
        registry.add("ratelimit.rules.configured-cap.match.route-ids[0]", () -> "nothing-routes-here");
        registry.add("ratelimit.rules.configured-cap.capacity", () -> "1000");
        registry.add("ratelimit.rules.configured-cap.refill-tokens", () -> "1000");
        registry.add("ratelimit.rules.configured-cap.refill-period", () -> "1m");
    }

    @Autowired
    ConfigurableApplicationContext context;

    @BeforeEach
    void clients() {
        GatewayInstance.awaitRedis(context);
        api = new RulesApiClient(managementPort, "/v1/rules");
        admin = api.as(ADMIN, ADMIN_PASSWORD);
        viewer = api.as(VIEWER, VIEWER_PASSWORD);
    }

    static String bucket(String route, int capacity) {
        return "{\"dimension\": [\"api-key\"], \"match\": {\"routes\": [\"" + route + "\"]}, \"algorithm\": "
                + "\"token-bucket\", \"capacity\": " + capacity + ", \"refillTokens\": 1, \"refillPeriod\": \"1h\"}";
    }

    @Test
    void aRulePutThroughTheApiLimitsTheGatewaysTraffic() throws IOException {
        EntityExchangeResult<String> put = api.put(admin, "api-cap", bucket("api", 2), IF_NONE_MATCH, "*");
        assertThat(put.getStatus().value()).as(put.getResponseBody()).isEqualTo(200);
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            statuses.add(RawHttp.get(port, "/api/x", "X-API-Key: limited-by-api"));
        }
        assertThat(statuses).as(() -> put.getResponseBody() + "\n" + viewer.get().uri(api.path()).exchange()
                .expectBody(String.class).returnResult().getResponseBody()).containsExactly(200, 200, 429);
        JsonNode rule = json(put);
        assertThat(rule.get("capacity").asInt()).isEqualTo(2);
        assertThat(rule.get("match").get("routeIds").get(0).asString()).isEqualTo("api");
        assertThat(rule.get("source").asString()).isEqualTo("runtime");
    }

    @Test
    void aWhatIfWithoutKafkaSaysTheEventsAreNotConfiguredAndIsTheAdminsAlone() {
        String request = "{\"rule\": " + bucket("api", 2) + ", \"from\": \"2026-12-01T00:00:00Z\", "
                + "\"to\": \"2026-12-01T01:00:00Z\"}";
        EntityExchangeResult<String> answer = admin.post().uri(api.rule("proposal") + "/what-if")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(request).exchange().expectBody(String.class)
                .returnResult();
        assertThat(answer.getStatus().value()).as(answer.getResponseBody()).isEqualTo(409);
        assertThat(json(answer).get("error").asString()).isEqualTo("events_not_configured");
        assertThat(json(answer).get("detail").asString()).contains("ratelimit.events.kafka.bootstrap-servers");
        viewer.post().uri(api.rule("proposal") + "/what-if").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(request).exchange().expectStatus().isForbidden();
    }

    @Test
    void readsShowTheRuleWithTheRuleSetsVersionAsETag() {
        EntityExchangeResult<String> put = api.put(admin, "read-me", bucket("nothing-routes-here", 7), IF_NONE_MATCH,
                "*");
        long written = version(put);
        EntityExchangeResult<String> one = viewer.get().uri(api.rule("read-me")).exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult();
        assertThat(version(one)).isEqualTo(written);
        assertThat(json(one).get("capacity").asInt()).isEqualTo(7);
        EntityExchangeResult<String> all = viewer.get().uri(api.path()).exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult();
        assertThat(version(all)).isEqualTo(written);
        assertThat(json(all).get("version").asLong()).isEqualTo(written);
        List<String> ids = new ArrayList<>();
        json(all).get("rules").forEach(rule -> ids.add(rule.get("id").asString()));
        assertThat(ids).contains("read-me", "configured-cap", "free.default");
        assertThat(one.getResponseHeaders().getCacheControl()).isEqualTo("no-store");
    }

    /**
     * HEAD is a read (the viewer's) and answers as GET does, without the body: the same status, ETag, type and
     * length, for the collection, a rule, a rule that is not there and the OpenAPI document.
     */
    @Test
    void headAnswersAsGetDoesWithoutABody() throws IOException {
        api.put(admin, "headed", bucket("nothing-routes-here", 4), IF_NONE_MATCH, "*");
        String credentials = "Authorization: Basic " + Base64.getEncoder().encodeToString(
                (VIEWER + ":" + VIEWER_PASSWORD).getBytes(StandardCharsets.UTF_8));
        for (String path : List.of(api.path(), api.rule("headed"), api.rule("absent"), api.path() + "/_openapi.yaml")) {
            RawResponse get = RawResponse.send(managementPort, "GET", path, null, new byte[0], credentials);
            RawResponse head = RawResponse.send(managementPort, "HEAD", path, null, new byte[0], credentials);
            assertThat(head.status()).as("HEAD " + path + ", GET answers " + get.status()).isEqualTo(get.status());
            assertThat(head.body()).as("HEAD " + path).isEmpty();
            for (String name : List.of("etag", "content-type", "content-length")) {
                assertThat(head.headers().get(name)).as(name + " of HEAD " + path).isEqualTo(get.headers().get(name));
            }
        }
    }

    @Test
    void aRuleReadCanBeSentBackAsItIs() {
        api.put(admin, "round-trip", bucket("nothing-routes-here", 9), IF_NONE_MATCH, "*");
        EntityExchangeResult<String> read = viewer.get().uri(api.rule("round-trip")).exchange().expectBody(String.class)
                .returnResult();
        EntityExchangeResult<String> back = api.put(admin, "round-trip", read.getResponseBody(), IF_MATCH,
                ifMatch(version(read)));
        assertThat(back.getStatus().value()).as(back.getResponseBody()).isEqualTo(200);
        assertThat(version(back)).isGreaterThan(version(read));
        JsonNode before = json(read);
        JsonNode after = json(back);
        for (String name : List.of("capacity", "refillTokens", "refillPeriod", "match", "key", "mode", "algorithm")) {
            assertThat(after.get(name)).as(name).isEqualTo(before.get(name));
        }
    }

    @Test
    void aStaleIfMatchIs412AndLeavesTheRuleAsItWas() {
        long first = version(api.put(admin, "stale", bucket("nothing-routes-here", 3), IF_NONE_MATCH, "*"));
        long second = version(api.put(admin, "stale", bucket("nothing-routes-here", 4), IF_MATCH, ifMatch(first)));
        EntityExchangeResult<String> stale = api.put(admin, "stale", bucket("nothing-routes-here", 99), IF_MATCH,
                ifMatch(first));
        assertThat(stale.getStatus().value()).isEqualTo(412);
        assertThat(stale.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
        assertThat(json(stale).get("type").asString()).isEqualTo("urn:ratelimit:problem:precondition-failed");
        assertThat(json(stale).get("detail").asString()).contains("version " + second);
        EntityExchangeResult<String> now = viewer.get().uri(api.rule("stale")).exchange().expectBody(String.class)
                .returnResult();
        assertThat(json(now).get("capacity").asInt()).isEqualTo(4);
        assertThat(version(now)).isEqualTo(second);
        // a weak tag never matches, creating what exists is refused, a write without a precondition is refused
        EntityExchangeResult<String> weak = api.put(admin, "stale", bucket("nothing-routes-here", 5), IF_MATCH,
                "W/\"" + second + "\"");
        assertThat(weak.getStatus().value()).isEqualTo(412);
        assertThat(weak.getResponseBody()).as("byte for byte, as the application's own JSON codec writes it")
                .isEqualTo("{\"type\":\"urn:ratelimit:problem:precondition-failed\",\"title\":\"The rules changed "
                        + "since they were read\",\"status\":412,\"detail\":\"If-Match holds no entity tag of this API "
                        + "(a strong tag such as \\\"17\\\", the ETag of a read).\",\"instance\":\"/v1/rules/stale\","
                        + "\"error\":\"precondition_failed\"}");
        assertThat(api.put(admin, "stale", bucket("nothing-routes-here", 5), IF_NONE_MATCH, "*").getStatus().value())
                .isEqualTo(412);
        EntityExchangeResult<String> blind = api.put(admin, "stale", bucket("nothing-routes-here", 5), null, null);
        assertThat(blind.getStatus().value()).isEqualTo(428);
        assertThat(json(blind).get("error").asString()).isEqualTo("precondition_required");
        assertThat(json(viewer.get().uri(api.rule("stale")).exchange().expectBody(String.class).returnResult())
                .get("capacity").asInt()).isEqualTo(4);
        // If-Match: * replaces whatever is there, on a rule that exists
        assertThat(api.put(admin, "stale", bucket("nothing-routes-here", 6), IF_MATCH, "*").getStatus().value())
                .isEqualTo(200);
        assertThat(api.put(admin, "never-was", bucket("nothing-routes-here", 6), IF_MATCH, "*").getStatus().value())
                .isEqualTo(412);
    }

    @Test
    void deleteNeedsAPreconditionAndBringsTheConfiguredRuleBack() {
        long created = version(api.put(admin, "configured-cap", bucket("nothing-routes-here", 5), IF_MATCH, "*"));
        assertThat(admin.delete().uri(api.rule("configured-cap")).exchange().expectStatus().isEqualTo(428)
                .expectBody(String.class).returnResult().getResponseBody()).contains("precondition_required");
        admin.delete().uri(api.rule("configured-cap")).header(IF_MATCH, ifMatch(created - 1)).exchange()
                .expectStatus().isEqualTo(412);
        admin.delete().uri(api.rule("configured-cap")).header(IF_MATCH, ifMatch(created)).exchange()
                .expectStatus().isNoContent().expectHeader().exists("ETag");
        JsonNode back = json(viewer.get().uri(api.rule("configured-cap")).exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult());
        assertThat(back.get("source").asString()).isEqualTo("configuration");
        assertThat(back.get("capacity").asInt()).isEqualTo(1000);
        // the configured rule itself cannot be deleted, a rule that is not there is 404
        admin.delete().uri(api.rule("configured-cap")).header(IF_MATCH, "*").exchange().expectStatus()
                .isEqualTo(409);
        admin.delete().uri(api.rule("no-such-rule")).header(IF_MATCH, "*").exchange().expectStatus().isNotFound();
        viewer.get().uri(api.rule("no-such-rule")).exchange().expectStatus().isNotFound()
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON);
    }

    /**
     * A write whose rules cannot even be read (Redis paused) is refused before anything is sent: that refusal, unlike
     * a write that times out once sent, may say nothing changed, and nothing is in force once Redis answers again.
     */
    @Test
    void aWriteRefusedBeforeItIsSentSaysNothingChangedAndNothingIsInForceOnceRedisAnswers() {
        EntityExchangeResult<String> refused;
        fixture.redis().server().pause();
        try {
            refused = api.put(admin, "unread-while-paused", bucket("nothing-routes-here", 8), IF_NONE_MATCH, "*");
        }
        finally {
            fixture.redis().server().resume();
        }
        assertThat(refused.getStatus().value()).as(refused.getResponseBody()).isEqualTo(503);
        assertThat(json(refused).get("error").asString()).isEqualTo("rule_store_unavailable");
        assertThat(json(refused).get("detail").asString()).contains("nothing changed");
        // a write answered now went after anything the limiter's connection held during the pause
        EntityExchangeResult<String> after = api.put(admin, "written-after-the-pause", bucket("nothing-routes-here", 8),
                IF_NONE_MATCH, "*");
        assertThat(after.getStatus().value()).as(after.getResponseBody()).isEqualTo(200);
        viewer.get().uri(api.rule("unread-while-paused")).exchange().expectStatus().isNotFound();
        admin.delete().uri(api.rule("written-after-the-pause")).header(IF_MATCH, "*").exchange().expectStatus()
                .isNoContent();
    }

    @Test
    void nobodyWithoutTheAdminRoleChangesARule() {
        WebTestClient anonymous = api.as(null, null);
        anonymous.get().uri(api.path()).exchange().expectStatus().isUnauthorized();
        anonymous.put().uri(api.rule("intruder")).contentType(MediaType.APPLICATION_JSON).header(IF_NONE_MATCH, "*")
                .bodyValue(bucket("api", 1)).exchange().expectStatus().isUnauthorized();
        api.as(ADMIN, "wrong-password-0000").get().uri(api.path()).exchange().expectStatus().isUnauthorized();
        viewer.put().uri(api.rule("intruder")).contentType(MediaType.APPLICATION_JSON).header(IF_NONE_MATCH, "*")
                .bodyValue(bucket("api", 1)).exchange().expectStatus().isForbidden();
        viewer.delete().uri(api.rule("free.default")).header(IF_MATCH, "*").exchange().expectStatus().isForbidden();
        viewer.get().uri(api.path() + "/_openapi.yaml").exchange().expectStatus().isOk();
        viewer.get().uri(api.rule("intruder")).exchange().expectStatus().isNotFound();
    }

    @Test
    void thePublicPortRoutesTheApisPathToItsUpstreamAndServesNoRules() throws IOException {
        long before = upstream.hits();
        assertThat(RawHttp.get(port, "/v1/rules", "X-API-Key: public-caller")).isEqualTo(200);
        assertThat(RawHttp.send(port, "PUT", "/v1/rules/x", bucket("api", 1), "X-API-Key: public-caller",
                "If-Match: *")).isEqualTo(200);
        assertThat(upstream.hits()).isEqualTo(before + 2);
        assertThat(RawHttp.get(port, "/actuator/v1/rules", "X-API-Key: public-caller")).isEqualTo(404);
        viewer.get().uri(api.rule("x")).exchange().expectStatus().isNotFound();
    }

    /** A document, and the status and field (null: none) its refusal names. */
    record Refused(String document, int status, String field) {
    }

    @Test
    void everyRefusedDocumentIsAProblemNamingTheFieldAndTheRulesInForceStay() {
        api.put(admin, "guarded", bucket("api", 40), IF_NONE_MATCH, "*");
        EntityExchangeResult<String> before = viewer.get().uri(api.path()).exchange().expectBody(String.class)
                .returnResult();
        String valid = "\"capacity\": 5, \"refillTokens\": 5, \"refillPeriod\": \"1m\"";
        String deep = "[".repeat(5000) + "]".repeat(5000);
        List<Refused> cases = List.of(
                new Refused("{\"capacity\": \"lots\", \"refillTokens\": 5}", 422, "capacity"),
                new Refused("{\"capacity\": -1, \"refillTokens\": 5, \"refillPeriod\": \"1m\"}", 422, "capacity"),
                new Refused("{\"burst\": -1, \"refillTokens\": 5, \"refillPeriod\": \"1m\"}", 422, "burst"),
                new Refused("{\"capcity\": 5, \"refillTokens\": 5}", 422, "capcity"),
                new Refused("{\"refill-tokens\": 5, \"capacity\": 5}", 422, "refill-tokens"),
                new Refused("{" + valid + ", \"match\": {\"tiers\": [\"free\", 5]}}", 422, "match.tiers[1]"),
                new Refused("{" + valid + ", \"match\": {\"tier\": [\"free\"]}}", 422, "match.tier"),
                new Refused("{" + valid + ", \"match\": [\"free\"]}", 422, "match"),
                new Refused("{" + valid + ", \"dimension\": [\"api-key\", \"shoe-size\"]}", 422, "dimension[1]"),
                new Refused("{" + valid + ", \"mode\": \"sometimes\"}", 422, "mode"),
                new Refused("{" + valid + ", \"cost\": 1.5}", 422, "cost"),
                new Refused("{" + valid + ", \"costExpression\": \"headers['n'\"}", 422, "costExpression"),
                new Refused("{" + valid + ", \"costExpression\": \"T(java.lang.System).exit(1)\"}", 422,
                        "costExpression"),
                new Refused("{" + valid + ", \"chargeFromResponse\": {\"jsonPath\": \"usage\"}}", 422,
                        "chargeFromResponse.jsonPath"),
                new Refused("{" + valid + ", \"chargeFromResponse\": {\"header\": \"X-U\", \"jsonField\": \"u\"}}",
                        422, "chargeFromResponse"),
                new Refused("{" + valid + ", \"shards\": 99999999999999999999}", 422, "shards"),
                new Refused("{" + valid + ", \"enabled\": {\"a\": {\"b\": [1, {\"c\": null}]}}}", 422, "enabled"),
                new Refused("{" + valid + ", \"group\": \"" + "g".repeat(5000) + "\"}", 422, "group"),
                new Refused("{" + valid + ", \"burst\": 6}", 422, "burst"),
                new Refused("{" + valid + ", \"id\": \"someone-else\"}", 422, "id"),
                new Refused("[" + valid.replace(':', ',') + "]", 422, null),
                new Refused("{" + valid + ",", 400, null),
                new Refused("{" + valid + "} {}", 400, null),
                new Refused("{" + valid + ", \"capacity\": 500}", 400, null),
                new Refused(deep, 400, null),
                new Refused("", 400, null),
                new Refused("{" + valid + ", \"paths\": [\"" + "/x".repeat(200_000) + "\"]}", 413, null));
        for (Refused refused : cases) {
            String shown = refused.document().length() > 120 ? refused.document().substring(0, 120) + "..."
                    : refused.document();
            EntityExchangeResult<String> answer = api.put(admin, "guarded", refused.document(), IF_MATCH, "*");
            assertThat(answer.getStatus().value()).as(shown + " -> " + answer.getResponseBody())
                    .isEqualTo(refused.status());
            JsonNode problem = json(answer);
            assertThat(answer.getResponseHeaders().getContentType()).as(shown)
                    .isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
            assertThat(problem.get("status").asInt()).isEqualTo(refused.status());
            assertThat(problem.get("type").asString()).startsWith("urn:ratelimit:problem:");
            assertThat(problem.get("detail").asString()).as(shown).isNotBlank();
            assertThat(problem.has("field") ? problem.get("field").asString() : null).as(shown + " -> " + problem)
                    .isEqualTo(refused.field());
        }
        for (String type : List.of("text/plain", "application/x-www-form-urlencoded")) {
            admin.put().uri(api.rule("guarded")).header("Content-Type", type).header(IF_MATCH, "*")
                    .bodyValue("capacity=1").exchange().expectStatus().isEqualTo(415);
        }
        EntityExchangeResult<String> after = viewer.get().uri(api.path()).exchange().expectBody(String.class)
                .returnResult();
        assertThat(version(after)).isEqualTo(version(before));
        assertThat(json(after)).isEqualTo(json(before));
    }

    /**
     * Last, from what every test saw: each path, method and status answered is in the OpenAPI document the API
     * serves, which is the starter's own with the mount's path.
     */
    @AfterAll
    static void everyAnswerSeenIsInTheOpenApiDocument(@Autowired ConfigurableApplicationContext context)
            throws IOException {
        int managementPort = Integer.parseInt(context.getEnvironment().getProperty("local.management.port"));
        String served = new RulesApiClient(managementPort, "/v1/rules").as(VIEWER, VIEWER_PASSWORD).get()
                .uri("/v1/rules/_openapi.yaml").exchange().expectStatus().isOk().expectHeader()
                .contentTypeCompatibleWith(MediaType.APPLICATION_YAML).expectBody(String.class).returnResult()
                .getResponseBody();
        try (var in = RulesApiIntegrationTest.class.getClassLoader()
                .getResourceAsStream("META-INF/ratelimit/rules-api.openapi.yaml")) {
            assertThat(served).isEqualTo(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
        assertThat(RulesApiClient.seen).hasSizeGreaterThan(10);
        assertThat(RulesApiClient.undocumented(served)).isEmpty();
    }

    static JsonNode json(EntityExchangeResult<String> result) {
        return JsonMapper.builder().build().readTree(result.getResponseBody());
    }
}

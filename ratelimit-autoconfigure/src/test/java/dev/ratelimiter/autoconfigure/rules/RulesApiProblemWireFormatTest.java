package dev.ratelimiter.autoconfigure.rules;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.autoconfigure.RuleProperties;
import dev.ratelimiter.core.ForwardingRuleStore;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuleSync;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * Every problem the rules API answers, byte for byte as the WebFlux routes write it (status, {@code Content-Type},
 * body): what operators' scripts parse. The operations run over an in-memory rule store; the JSON is written by the
 * routes' own codecs.
 */
class RulesApiProblemWireFormatTest {

    private static final String PROBLEM = "application/problem+json";

    private final RuleStore shared = new InMemoryRuleStore();
    private RuleSync sync;

    @AfterEach
    void stop() {
        if (sync != null) {
            sync.stop();
        }
    }

    @Test
    void everyProblemIsWrittenAsPinned() {
        WebTestClient open = client(shared, RulesApiAccess.OPEN);
        WebTestClient byRole = client(shared, RulesApiAccess.byRole());
        WebTestClient unsent = client(new ForwardingRuleStore(shared) {
            @Override
            public Mono<Long> putRule(String id, Map<String, String> spec, long expectedVersion) {
                return Mono.error(new RuleStore.NotSentException("not connected yet", null));
            }
        }, RulesApiAccess.OPEN);
        String json = MediaType.APPLICATION_JSON_VALUE;
        SoftAssertions softly = new SoftAssertions();

        pin(softly, byRole, HttpMethod.GET, "/v1/rules", null, null, headers -> { }, 403,
                "{\"type\":\"urn:ratelimit:problem:forbidden\",\"title\":\"Forbidden\",\"status\":403,\"detail\":\"Readi"
                + "ng the rules needs the RATELIMIT_VIEWER or RATELIMIT_ADMIN role.\",\"instance\":\"/v1/rules\",\""
                + "error\":\"forbidden\"}");
        pin(softly, byRole, HttpMethod.PUT, "/v1/rules/x", json, null, ifNoneMatch(), 403,
                "{\"type\":\"urn:ratelimit:problem:forbidden\",\"title\":\"Forbidden\",\"status\":403,\"detail\":\"Chang"
                + "ing limits needs the RATELIMIT_ADMIN role.\",\"instance\":\"/v1/rules/x\",\"error\":\"forbidden\"}");
        pin(softly, open, HttpMethod.GET, "/v1/rules/nothing", null, null, headers -> { }, 404,
                "{\"type\":\"urn:ratelimit:problem:unknown-rule\",\"title\":\"Not Found\",\"status\":404,\"detail\":\"Th"
                + "ere is no rule 'nothing'.\",\"instance\":\"/v1/rules/nothing\",\"error\":\"unknown_rule\"}");
        pin(softly, open, HttpMethod.GET, "/v1/rules/a/b", null, null, headers -> { }, 404,
                "{\"type\":\"urn:ratelimit:problem:not-found\",\"title\":\"Not Found\",\"status\":404,\"detail\":\"The r"
                + "ules API has no /v1/rules/a/b: rules are at <path>/{ruleId}.\",\"instance\":\"/v1/rules/a/b\",\""
                + "error\":\"not_found\"}");
        pin(softly, open, HttpMethod.POST, "/v1/rules/x", json, null, headers -> { }, 405,
                "{\"type\":\"urn:ratelimit:problem:method-not-allowed\",\"title\":\"Method Not Allowed\",\"status\":4"
                + "05,\"detail\":\"POST is not an operation of the rules API: GET, PUT and DELETE are.\",\"instanc"
                + "e\":\"/v1/rules/x\",\"error\":\"method_not_allowed\"}");
        pin(softly, open, HttpMethod.PUT, "/v1/rules/x", json, null, headers -> { }, 428,
                "{\"type\":\"urn:ratelimit:problem:precondition-required\",\"title\":\"If-Match or If-None-Match r"
                + "equired\",\"status\":428,\"detail\":\"A write names the version it was prepared against, so that"
                + " it never overwrites a change it did not see: If-Match: \\\"<version>\\\" (the ETag of a read)"
                + ", If-Match: * to replace whatever is there, or If-None-Match: * to create a rule that does"
                + " not exist yet.\",\"instance\":\"/v1/rules/x\",\"error\":\"precondition_required\"}");
        pin(softly, open, HttpMethod.PUT, "/v1/rules/x", json, null, headers -> headers.setIfMatch("W/\"1\""),
                412,
                "{\"type\":\"urn:ratelimit:problem:precondition-failed\",\"title\":\"The rules changed since they "
                + "were read\",\"status\":412,\"detail\":\"If-Match holds no entity tag of this API (a strong tag s"
                + "uch as \\\"17\\\", the ETag of a read).\",\"instance\":\"/v1/rules/x\",\"error\":\"precondition_failed"
                + "\"}");
        pin(softly, open, HttpMethod.PUT, "/v1/rules/x", json, bucket(), headers -> headers.setIfMatch("\"999\""),
                412,
                "{\"type\":\"urn:ratelimit:problem:precondition-failed\",\"title\":\"The rules changed since they "
                + "were read\",\"status\":412,\"detail\":\"There is no rule 'x' to replace; create it with If-None-"
                + "Match: *.\",\"instance\":\"/v1/rules/x\",\"error\":\"precondition_failed\"}");
        pin(softly, open, HttpMethod.PUT, "/v1/rules/x", "application/x-www-form-urlencoded", "a=b", ifNoneMatch(),
                415,
                "{\"type\":\"urn:ratelimit:problem:unsupported-media-type\",\"title\":\"Unsupported Media Type\",\"s"
                + "tatus\":415,\"detail\":\"A rule document is sent as application/json, not application/x-www-fo"
                + "rm-urlencoded.\",\"instance\":\"/v1/rules/x\",\"error\":\"unsupported_media_type\"}");
        pin(softly, open, HttpMethod.PUT, "/v1/rules/x", json, " ".repeat(RuleDocumentReader.MAX_BYTES + 1),
                ifNoneMatch(), 413,
                "{\"type\":\"urn:ratelimit:problem:document-too-large\",\"title\":\"Content Too Large\",\"status\":41"
                + "3,\"detail\":\"A rule document is at most 262144 bytes.\",\"instance\":\"/v1/rules/x\",\"error\":\"do"
                + "cument_too_large\"}");
        pin(softly, open, HttpMethod.PUT, "/v1/rules/x", json, "", ifNoneMatch(), 400,
                "{\"type\":\"urn:ratelimit:problem:malformed-document\",\"title\":\"Malformed rule document\",\"stat"
                + "us\":400,\"detail\":\"The request has no rule document.\",\"instance\":\"/v1/rules/x\",\"error\":\"mal"
                + "formed_document\"}");
        pin(softly, open, HttpMethod.PUT, "/v1/rules/x", json, "{\"capacity\": \u0001}", ifNoneMatch(), 400,
                "{\"type\":\"urn:ratelimit:problem:malformed-document\",\"title\":\"Malformed rule document\",\"stat"
                + "us\":400,\"detail\":\"The rule document is not valid JSON (line 1, column 14): Illegal charact"
                + "er ((CTRL-CHAR, code 1)): only regular white space (\\\\r, \\\\n, \\\\t) is allowed between toke"
                + "ns\",\"instance\":\"/v1/rules/x\",\"error\":\"malformed_document\"}");
        pin(softly, open, HttpMethod.PUT, "/v1/rules/x", json, "{\"capacity\": -1, \"refillTokens\": 1}",
                ifNoneMatch(), 422,
                "{\"type\":\"urn:ratelimit:problem:invalid-rule\",\"title\":\"Invalid rule\",\"status\":422,\"detail\":"
                + "\"capacity must be at least 1 (the largest burst a client may send), but was -1.\",\"instance"
                + "\":\"/v1/rules/x\",\"error\":\"invalid_rule\",\"field\":\"capacity\"}");
        pin(softly, open, HttpMethod.PUT, "/v1/rules/x", json, "{\"capacity\": 5, \"refillTokens\": 1, "
                + "\"match\": {\"tiers\": [\"free\", \"\"]}}", ifNoneMatch(), 422,
                "{\"type\":\"urn:ratelimit:problem:invalid-rule\",\"title\":\"Invalid rule\",\"status\":422,\"detail\":"
                + "\"match.tiers[1] is empty: give it a value or leave it out\",\"instance\":\"/v1/rules/x\",\"error"
                + "\":\"invalid_rule\",\"field\":\"match.tiers[1]\"}");
        pin(softly, open, HttpMethod.PUT, "/v1/rules/Bad\"Id", json, bucket(), ifNoneMatch(), 400,
                "{\"type\":\"urn:ratelimit:problem:invalid-rule\",\"title\":\"Invalid rule\",\"status\":400,\"detail\":"
                + "\"Rule ids must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or dig"
                + "it; got 'Bad\\\"Id'.\",\"instance\":\"/v1/rules/Bad%22Id\",\"error\":\"invalid_rule\",\"field\":\"id\"}");
        pin(softly, open, HttpMethod.DELETE, "/v1/rules/login", null, null, ifMatchAny(), 409,
                "{\"type\":\"urn:ratelimit:problem:configured-rule\",\"title\":\"Conflict\",\"status\":409,\"detail\":\""
                + "Rule 'login' is defined in the application's configuration and cannot be deleted at runtim"
                + "e; put a rule with the same id to change it (for example mode: shadow).\",\"instance\":\"/v1/r"
                + "ules/login\",\"error\":\"configured_rule\"}");
        pin(softly, open, HttpMethod.DELETE, "/v1/rules/nothing", null, null, ifMatchAny(), 404,
                "{\"type\":\"urn:ratelimit:problem:unknown-rule\",\"title\":\"Not Found\",\"status\":404,\"detail\":\"Th"
                + "ere is no runtime rule 'nothing'.\",\"instance\":\"/v1/rules/nothing\",\"error\":\"unknown_rule\"}");
        pin(softly, unsent, HttpMethod.PUT, "/v1/rules/x", json, bucket(), ifNoneMatch(), 503,
                "{\"type\":\"urn:ratelimit:problem:rule-store-unavailable\",\"title\":\"Service Unavailable\",\"stat"
                + "us\":503,\"detail\":\"The rule store could not be reached (not connected yet); nothing changed"
                + ".\",\"instance\":\"/v1/rules/x\",\"error\":\"rule_store_unavailable\"}");
        softly.assertAll();
    }

    @Test
    void aPathThatIsNoUriIsStillTheInstanceInItsPlace() {
        RulesApiOperations.Answer answer = RuleProblems.answer("/v1/rules/a|b{c}", HttpStatus.NOT_FOUND, "not_found",
                null, "The rules API has no /v1/rules/a|b{c}.");

        assertThat(answer.body()).asInstanceOf(InstanceOfAssertFactories.MAP).containsExactly(
                entry("type", "urn:ratelimit:problem:not-found"), entry("title", "Not Found"), entry("status", 404),
                entry("detail", "The rules API has no /v1/rules/a|b{c}."), entry("instance", "/v1/rules/a|b{c}"),
                entry("error", "not_found"));
        assertThat(RuleProblems.problem("/v1/rules/x", HttpStatus.NOT_FOUND, "unknown_rule", null, "None.")
                .getInstance()).isEqualTo(URI.create("/v1/rules/x"));
    }

    private static void pin(SoftAssertions softly, WebTestClient client, HttpMethod method, String path,
            String type, String body, Consumer<HttpHeaders> headers, int status, String expected) {
        WebTestClient.RequestBodySpec request = client.method(method).uri(path).headers(headers);
        if (type != null) {
            request.header(HttpHeaders.CONTENT_TYPE, type);
        }
        EntityExchangeResult<byte[]> result = (body != null ? request.bodyValue(body.getBytes(StandardCharsets.UTF_8))
                : request).exchange().expectBody().returnResult();
        String shown = method + " " + path;
        softly.assertThat(result.getStatus().value()).as(shown).isEqualTo(status);
        softly.assertThat(result.getResponseHeaders().getFirst(HttpHeaders.CONTENT_TYPE)).as(shown).isEqualTo(PROBLEM);
        softly.assertThat(new String(result.getResponseBodyContent(), StandardCharsets.UTF_8)).as(shown)
                .isEqualTo(expected);
    }

    private static Consumer<HttpHeaders> ifNoneMatch() {
        return headers -> headers.setIfNoneMatch("*");
    }

    private static Consumer<HttpHeaders> ifMatchAny() {
        return headers -> headers.setIfMatch("*");
    }

    private static String bucket() {
        return "{\"capacity\": 5, \"refillTokens\": 1, \"refillPeriod\": \"1m\"}";
    }

    private WebTestClient client(RuleStore store, RulesApiAccess access) {
        RuleSetFactory factory = new RuleSetFactory(new PropertyRuleDefinitions(properties()));
        if (sync == null) {
            sync = new RuleSync(shared, factory, new RuleSetHolder(factory.configured()), Duration.ofHours(1));
            sync.start();
        }
        RulesApiMount mount = new RulesApiMount("/v1/rules");
        RulesApiOperations operations = new RulesApiOperations(new RuleAdmin(store, sync, factory), sync,
                new RuleView(sync, factory.definitions().keyring()), access, "openapi: 3.1.0\n", mount);
        return WebTestClient.bindToRouterFunction(RulesApiRoutes.of(mount, new RulesApiHandler(operations)))
                .build();
    }

    /** One configured rule, which the API may replace but not delete. */
    private static RateLimitProperties properties() {
        RuleProperties login = new RuleProperties();
        login.setCapacity(5);
        login.setRefillTokens(5);
        RateLimitProperties properties = new RateLimitProperties();
        properties.setRules(Map.of("login", login));
        return properties;
    }
}

package dev.ratelimiter.autoconfigure.usage;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import dev.ratelimiter.autoconfigure.rules.RulesApiAccess;
import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.ClientAddressResolver;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.UsageLookup;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.AdmissionRequest;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.RequestIdentity;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /ratelimit/me?path=...&route=...&rule=...} with hostile values, over rules that match by path: every
 * answer is a reading (200) or the query's refusal (400/404), never a 5xx — and never 503 "store unavailable" for what
 * is the query's fault. The guard's clock is frozen past any burst: each read gets a fresh caller.
 */
class CallerUsageQueryFuzzTest {

    private static final RequestIdentity HEADERS = new RequestIdentity("X-Key", "X-User", "X-Tenant",
            new ClientAddressResolver(List.of(), 32, 64));

    private final ClientIds clientIds = ClientIds.unkeyed();
    private final LocalBucketStore store = new LocalBucketStore(1_000);

    private final RuleSet rules = RuleSet.builder("free")
            .rule(new Rule("free.default", "free.default", Match.ANY, List.of(Dimension.API_KEY),
                    new TokenBucketLimit(10, 10, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.OPEN))
            .rule(new Rule("admin-cap", "admin-cap", new Match(java.util.Set.of(), List.of("/api/admin/**"),
                    java.util.Set.of(), java.util.Set.of(), java.util.Set.of()), List.of(Dimension.API_KEY),
                    new TokenBucketLimit(10, 10, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.OPEN))
            .build();

    private final RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, store, clientIds);
    private final Admission admission = new Admission(evaluator, HEADERS, new ApiKeyRefusals(true,
            HttpStatusCode.valueOf(401), HttpStatusCode.valueOf(401)), ApiKeyFormat.ANY, VerdictListener.NONE,
            Clock.systemUTC());
    private final UsageOperations operations = new UsageOperations(new UsageLookup(() -> rules, clientIds, null,
            store, Clock.systemUTC()), new UsageQueries(ApiKeyFormat.ANY), clientIds, RulesApiAccess.OPEN, null);
    private final CallerUsage usage = new CallerUsage(admission, operations, clientIds, () -> 0L);

    @Test
    void hostileValuesAreReadOrRefusedNeverAServerError() {
        List<String> values = new ArrayList<>(List.of("no-slash", "%", "%zz", "/%", "/api/admin/%2e%2e;x", "//",
                "/api/admin/..;/x", "\u0000", "/\u0000", "/a\\b", "..", "/" + "../".repeat(2000), "/" + "%25".repeat(
                        500) + "2e", "*", "/**", "/api/**/admin", "\uD800", "/\uDFFF", "", " ", "/api/admin/ x"));
        Random random = new Random(35);
        for (int i = 0; i < 300; i++) {
            StringBuilder text = new StringBuilder();
            for (int c = 0; c < 1 + random.nextInt(30); c++) {
                String alphabet = "/%.;\\a\u00e9\u0000*2e";
                text.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            values.add(text.toString());
        }
        int key = 0;
        for (String value : values) {
            for (String parameter : List.of("path", "route", "routeClass", "rule")) {
                HttpHeaders headers = new HttpHeaders();
                headers.set("X-Key", "fuzz-key-" + key++);
                CallerUsage.Reply reply = usage.read(rules, HEADERS.caller(headers), new AdmissionRequest(
                        "/ratelimit/me", null, Map.of(), () -> "192.0.2.7"), Map.of(parameter, List.of(value)),
                        "/ratelimit/me");
                assertThat(reply.refusal()).isNull();
                int status = reply.answer().block(Duration.ofSeconds(10)).status().value();
                assertThat(status).as("%s=%s", parameter, value).isIn(200, 400, 404);
            }
        }
    }

    /**
     * The caller's request to {@code /api//ADMIN/x} counts against the rule on {@code /api/admin/**} (rules match the
     * normalised path); asked about that path, {@code /ratelimit/me} must read the same rule, as {@code /v1/usage}
     * (which normalises) does.
     */
    @Test
    void aPathIsReadAsTheRequestWouldBeMatched() throws Exception {
        for (String path : List.of("/api/admin/x", "/api//admin/x", "/api/ADMIN/x", "/api/x/../admin/x")) {
            HttpHeaders headers = new HttpHeaders();
            headers.set("X-Key", "path-key-" + path.length());
            CallerUsage.Reply reply = usage.read(rules, HEADERS.caller(headers), new AdmissionRequest(
                    "/ratelimit/me", null, Map.of(), () -> "192.0.2.7"), Map.of("path", List.of(path)),
                    "/ratelimit/me");
            String body = new tools.jackson.databind.json.JsonMapper().writeValueAsString(
                    reply.answer().block(Duration.ofSeconds(10)).body());
            assertThat(body).as(path).contains("\"id\":\"admin-cap\"");
        }
    }
}

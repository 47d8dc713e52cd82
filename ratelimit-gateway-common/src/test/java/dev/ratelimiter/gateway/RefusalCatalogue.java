package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import org.springframework.http.HttpStatus;

/**
 * Every answer the limiter writes itself, with what a client receives for it byte for byte: the status, the headers
 * the answer sets and the body. Clients parse these bodies and branch on them, so a change of a byte here is a change
 * of the product's wire format; each flavour's test writes every entry and compares.
 */
public final class RefusalCatalogue {

    /**
     * One answer and its wire form.
     *
     * @param headers the headers the answer itself sets, in the order set ({@code Content-Type} included)
     */
    public record Pinned(String name, RefusalAnswer answer, int status, Map<String, String> headers, String body) {

        @Override
        public String toString() {
            return name;
        }
    }

    public static final BucketKey BUCKET = new BucketKey("AAAAAAAAAAAAAAAAAAAAAA", "api@t");
    private static final String PROBLEM = "application/problem+json";

    private RefusalCatalogue() {
    }

    /** Every kind of answer, some kinds in more than one form. */
    public static List<Pinned> all() {
        return List.of(
                new Pinned("rate limited, one policy", RefusalAnswer.rateLimited(Verdict.evaluated(List.of(
                        denied(rule("hourly", rate()), 30)), Verdict.Source.STORE)), 429, problem(),
                        "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
                                + "\"title\":\"Too Many Requests\",\"status\":429,"
                                + "\"detail\":\"Rate limit 'hourly' exceeded; retry after 30 seconds.\","
                                + "\"error\":\"rate_limited\",\"retryAfter\":30,\"policy\":\"hourly\","
                                + "\"violated-policies\":[\"hourly\"]}"),
                new Pinned("rate limited, several policies (quota exceeded)", RefusalAnswer.rateLimited(
                        Verdict.evaluated(List.of(denied(rule("hourly", rate()), 1), allowed(rule("daily", rate())),
                                denied(rule("burst", rate()), 90)), Verdict.Source.STORE)), 429, problem(),
                        "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
                                + "\"title\":\"Too Many Requests\",\"status\":429,"
                                + "\"detail\":\"Rate limit 'burst' exceeded; retry after 90 seconds.\","
                                + "\"error\":\"rate_limited\",\"retryAfter\":90,\"policy\":\"burst\","
                                + "\"violated-policies\":[\"burst\",\"hourly\"]}"),
                new Pinned("concurrency", RefusalAnswer.rateLimited(Verdict.evaluated(List.of(new RuleOutcome(
                        new Check(rule("exports", ConcurrencyLimit.of("c.", 2, Duration.ofSeconds(30))), BUCKET, 1,
                                false, new RequestPermits()), false, 0, Duration.ofSeconds(1),
                        Duration.ofSeconds(1))), Verdict.Source.STORE)), 429, problem(),
                        "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
                                + "\"title\":\"Too Many Requests\",\"status\":429,"
                                + "\"detail\":\"Concurrency limit 'exports' reached: 2 request(s) already in "
                                + "progress; retry after 1 second.\",\"error\":\"too_many_in_progress\","
                                + "\"retryAfter\":1,\"policy\":\"exports\",\"violated-policies\":[\"exports\"]}"),
                new Pinned("store failure, fail closed", RefusalAnswer.unavailable(Verdict.unavailable(List.of(
                        denied(rule("login", rate()), 2), denied(rule("signup", rate()), 2)))), 503,
                        problem("Retry-After", "2"),
                        "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,"
                                + "\"detail\":\"Rate limit 'login' cannot be checked right now; retry after 2 "
                                + "seconds.\",\"error\":\"limiter_unavailable\",\"retryAfter\":2,"
                                + "\"policy\":\"login\"}"),
                new Pinned("shed", RefusalAnswer.overloaded(null, "reports", "background", 4), 503,
                        problem("Retry-After", "4"),
                        "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,"
                                + "\"detail\":\"The service is at capacity and is shedding background requests "
                                + "first; retry after 4 seconds.\",\"error\":\"overloaded\",\"retryAfter\":4,"
                                + "\"priority\":\"background\",\"upstream\":\"reports\"}"),
                new Pinned("duplicated identity header", RefusalAnswer.duplicateIdentity(
                        RepeatedName.header("X-API-Key")), 400, problem(),
                        "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                                + "\"detail\":\"The X-API-Key header appears more than once; send it once.\","
                                + "\"error\":\"duplicate_identity_header\",\"header\":\"X-API-Key\"}"),
                new Pinned("duplicated identity parameter", RefusalAnswer.duplicateIdentity(
                        RepeatedName.query("client")), 400, problem(),
                        "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                                + "\"detail\":\"The query parameter 'client' appears more than once; send it "
                                + "once.\",\"error\":\"duplicate_identity_header\",\"parameter\":\"client\"}"),
                new Pinned("missing identity", RefusalAnswer.missingIdentity("per-user", "a user (the X-User-Id "
                        + "header)"), 400, problem(),
                        "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                                + "\"detail\":\"Limit 'per-user' needs a user (the X-User-Id header), which this "
                                + "request lacks.\",\"error\":\"missing_identity\",\"policy\":\"per-user\"}"),
                new Pinned("ambiguous path", RefusalAnswer.ambiguousPath(), 400, problem(),
                        "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                                + "\"detail\":\"The path has a '.', '..' or empty segment with ';' parameters, which "
                                + "servers read in two different ways; send the path without them.\","
                                + "\"error\":\"ambiguous_path\"}"),
                // the problem is worded from the request's own bytes: what JSON must escape is escaped, and the
                // characters some readers break lines on too
                new Pinned("invalid API key, escaped", RefusalAnswer.invalidApiKey("the X-API-Key header",
                        "has the character '\"' (\\, \u0001, \u007f, \u2028) that keys may not have"), 400, problem(),
                        "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                                + "\"detail\":\"The API key in the X-API-Key header has the character '\\\"' (\\\\, "
                                + "\\u0001, \\u007f, \\u2028) that keys may not have.\","
                                + "\"error\":\"invalid_api_key\"}"),
                new Pinned("invalid identity", RefusalAnswer.invalidIdentity("user", "the X-User-Id header",
                        "is longer than 128 characters"), 400, problem(),
                        "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                                + "\"detail\":\"The user in the X-User-Id header is longer than 128 characters.\","
                                + "\"error\":\"invalid_identity\"}"),
                new Pinned("unvouched identity", RefusalAnswer.unknownIdentity("tenant"), 403, problem(),
                        "{\"type\":\"about:blank\",\"title\":\"Forbidden\",\"status\":403,"
                                + "\"detail\":\"The tenant must come from the token here; one the request states "
                                + "itself is not accepted.\",\"error\":\"unknown_identity\"}"),
                new Pinned("missing API key, 401", RefusalAnswer.missingApiKey(HttpStatus.UNAUTHORIZED,
                        "the X-API-Key header", "ApiKey header=\"X-API-Key\""), 401,
                        problem("WWW-Authenticate", "ApiKey header=\"X-API-Key\""),
                        "{\"type\":\"about:blank\",\"title\":\"Unauthorized\",\"status\":401,"
                                + "\"detail\":\"This API requires an API key in the X-API-Key header.\","
                                + "\"error\":\"missing_api_key\"}"),
                new Pinned("missing API key, configured 403", RefusalAnswer.missingApiKey(HttpStatus.FORBIDDEN,
                        "the X-API-Key header", "ApiKey header=\"X-API-Key\""), 403, problem(),
                        "{\"type\":\"about:blank\",\"title\":\"Forbidden\",\"status\":403,"
                                + "\"detail\":\"This API requires an API key in the X-API-Key header.\","
                                + "\"error\":\"missing_api_key\"}"),
                new Pinned("unknown API key, 401", RefusalAnswer.unknownApiKey(HttpStatus.UNAUTHORIZED,
                        "the X-API-Key header", "ApiKey header=\"X-API-Key\""), 401,
                        problem("WWW-Authenticate", "ApiKey header=\"X-API-Key\""),
                        "{\"type\":\"about:blank\",\"title\":\"Unauthorized\",\"status\":401,"
                                + "\"detail\":\"The API key in the X-API-Key header is not known here.\","
                                + "\"error\":\"unknown_api_key\"}"),
                new Pinned("unknown API key, configured 403", RefusalAnswer.unknownApiKey(HttpStatus.FORBIDDEN,
                        "the X-API-Key header", "ApiKey header=\"X-API-Key\""), 403, problem(),
                        "{\"type\":\"about:blank\",\"title\":\"Forbidden\",\"status\":403,"
                                + "\"detail\":\"The API key in the X-API-Key header is not known here.\","
                                + "\"error\":\"unknown_api_key\"}"),
                // a status without a reason phrase of its own
                new Pinned("unknown API key, unregistered status", RefusalAnswer.unknownApiKey(
                        org.springframework.http.HttpStatusCode.valueOf(499), "the X-API-Key header", null), 499,
                        problem(),
                        "{\"type\":\"about:blank\",\"title\":\"Error\",\"status\":499,"
                                + "\"detail\":\"The API key in the X-API-Key header is not known here.\","
                                + "\"error\":\"unknown_api_key\"}"));
    }

    private static Map<String, String> problem(String... more) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 0; i < more.length; i += 2) {
            headers.put(more[i], more[i + 1]);
        }
        headers.put("Content-Type", PROBLEM);
        return headers;
    }

    /** A denial by {@code rule}, to be retried after that many seconds. */
    public static RuleOutcome denied(Rule rule, long retryAfterSeconds) {
        return new RuleOutcome(new Check(rule, BUCKET, 1, false), false, 0, Duration.ofSeconds(retryAfterSeconds),
                Duration.ofSeconds(retryAfterSeconds));
    }

    public static RuleOutcome allowed(Rule rule) {
        return new RuleOutcome(new Check(rule, BUCKET, 1, false), true, 3, Duration.ZERO, Duration.ofSeconds(1));
    }

    /** A token bucket of 10 a minute. */
    public static TokenBucketLimit rate() {
        return TokenBucketLimit.of("t.", 10, 10, Duration.ofMinutes(1));
    }

    /** An enforced, fail-closed rule on the API key. */
    public static Rule rule(String id, Limit limit) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY), limit, 0, Mode.ENFORCE, FailureMode.CLOSED,
                StoreMode.EXACT, 1, null, Scope.REGIONAL);
    }
}

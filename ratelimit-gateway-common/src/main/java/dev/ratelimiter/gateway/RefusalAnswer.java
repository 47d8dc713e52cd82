package dev.ratelimiter.gateway;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.Verdict;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;

/**
 * One answer the limiter gives itself, described without a response to write it to: its kind, status, the headers
 * it sets, and its problem body's members. Each answer is spelt out once here, for every web stack: the WebFlux
 * {@link RefusalRenderer} and the Server MVC adapter write the same bodies.
 *
 * <p>A 429 has the problem type of draft-ietf-httpapi-ratelimit-headers for an exceeded quota,
 * {@value RefusalRenderer#QUOTA_EXCEEDED}, with its {@code violated-policies} member; the 503s and the identity answers
 * are {@code about:blank}: neither is a quota the client used up.
 */
public final class RefusalAnswer {

    /** Parsed once: every refusal carries one of the two. */
    private static final URI QUOTA_EXCEEDED = URI.create(RefusalRenderer.QUOTA_EXCEEDED);
    private static final URI ABOUT_BLANK = URI.create("about:blank");

    private final Refusal.Kind kind;
    private final HttpStatusCode status;
    private final List<String> ruleIds;
    private final long retryAfterSeconds;
    private final RequestAttributes request;
    /** Headers the answer sets beside the body's ({@code Retry-After}, {@code WWW-Authenticate}), or null. */
    private final String headerName;
    private final String headerValue;
    private final Consumer<ProblemBody> members;

    private RefusalAnswer(Refusal.Kind kind, HttpStatusCode status, List<String> ruleIds, long retryAfterSeconds,
            RequestAttributes request, String headerName, String headerValue, Consumer<ProblemBody> members) {
        this.kind = kind;
        this.status = status;
        this.ruleIds = ruleIds;
        this.retryAfterSeconds = retryAfterSeconds;
        this.request = request;
        this.headerName = headerName;
        this.headerValue = headerValue;
        this.members = members;
    }

    /** 429 for a client over its limit; the rate-limit headers go on the response beside it. */
    public static RefusalAnswer rateLimited(Verdict verdict) {
        RuleOutcome limiting = verdict.limiting().orElseThrow();
        long retryAfter = RateLimitHeaders.retryAfterSeconds(limiting);
        String policy = limiting.rule().id();
        boolean concurrency = limiting.check().concurrency();
        Refusal.Kind kind = concurrency ? Refusal.Kind.TOO_MANY_IN_PROGRESS : Refusal.Kind.RATE_LIMITED;
        String what = concurrency
                ? "Concurrency limit '" + policy + "' reached: " + limiting.rule().limit().quota()
                        + " request(s) already in progress"
                : "Rate limit '" + policy + "' exceeded";
        List<String> violated = violatedPolicies(verdict, policy);
        return new RefusalAnswer(kind, HttpStatus.TOO_MANY_REQUESTS, violated, retryAfter, null, null, null,
                body -> body.problem(QUOTA_EXCEEDED, "Too Many Requests", 429, what + retryAfter(retryAfter))
                        .put("error", kind.error())
                        .put("retryAfter", retryAfter).put("policy", policy)
                        .put(RefusalRenderer.VIOLATED_POLICIES, violated));
    }

    /** 503 for a request that a fail-closed rule could not check: the limiter, not the client, is the cause. */
    public static RefusalAnswer unavailable(Verdict verdict) {
        RuleOutcome limiting = verdict.limiting().orElseThrow();
        long retryAfter = RateLimitHeaders.retryAfterSeconds(limiting);
        String policy = limiting.rule().id();
        List<String> unchecked = verdict.outcomes().stream().map(outcome -> outcome.rule().id()).toList();
        return new RefusalAnswer(Refusal.Kind.LIMITER_UNAVAILABLE, HttpStatus.SERVICE_UNAVAILABLE, unchecked,
                retryAfter, null, HttpHeaders.RETRY_AFTER, String.valueOf(retryAfter), body -> unavailable(body,
                        "Rate limit '" + policy + "' cannot be checked right now" + retryAfter(retryAfter))
                        .put("error", Refusal.Kind.LIMITER_UNAVAILABLE.error()).put("retryAfter", retryAfter)
                        .put("policy", policy));
    }

    /** 503 for a request shed because the upstream is full: the server is busy, the client did nothing wrong. */
    public static RefusalAnswer overloaded(RequestAttributes request, String upstream, String priority,
            long retryAfter) {
        return new RefusalAnswer(Refusal.Kind.OVERLOADED, HttpStatus.SERVICE_UNAVAILABLE, List.of(), retryAfter,
                request, HttpHeaders.RETRY_AFTER, String.valueOf(retryAfter), body -> unavailable(body,
                        "The service is at capacity and is shedding " + priority + " requests first"
                                + retryAfter(retryAfter))
                        .put("error", Refusal.Kind.OVERLOADED.error()).put("retryAfter", retryAfter)
                        .put("priority", priority).put("upstream", upstream));
    }

    /** 400 for a request that says twice who it is: the limiter will not pick one of the two. */
    public static RefusalAnswer duplicateIdentity(RepeatedName repeated) {
        String what = repeated.describe();
        return badRequest(Refusal.Kind.DUPLICATE_IDENTITY, List.of(), Character.toUpperCase(what.charAt(0))
                + what.substring(1) + " appears more than once; send it once.",
                body -> body.put(repeated.kind().field(), repeated.name()));
    }

    /** 400 for a request without a value that a rule denying such requests needs ({@code when-missing: deny}). */
    public static RefusalAnswer missingIdentity(String ruleId, String what) {
        return badRequest(Refusal.Kind.MISSING_IDENTITY, List.of(ruleId), "Limit '" + ruleId + "' needs " + what
                + ", which this request lacks.", body -> body.put("policy", ruleId));
    }

    /** 400 for a path that upstreams read as two different paths ({@code /api/admin/..;/x}). */
    public static RefusalAnswer ambiguousPath() {
        return badRequest(Refusal.Kind.AMBIGUOUS_PATH, List.of(), "The path has a '.', '..' or empty segment with "
                + "';' parameters, which servers read in two different ways; send the path without them.", body -> { });
    }

    /** 400 for an API key that fails the configured format check; {@code where} is the key's source in words. */
    public static RefusalAnswer invalidApiKey(String where, String problem) {
        return badRequest(Refusal.Kind.INVALID_API_KEY, List.of(), "The API key in " + where + " " + problem + ".",
                body -> { });
    }

    /** 400 for a user or tenant id that fails its format check ({@code what}: "user" or "tenant"). */
    public static RefusalAnswer invalidIdentity(String what, String where, String problem) {
        return badRequest(Refusal.Kind.INVALID_IDENTITY, List.of(), "The " + what + " in " + where + " " + problem
                + ".", body -> { });
    }

    /** 403 for a user or tenant id the client stated where it must come from the token. */
    public static RefusalAnswer unknownIdentity(String what) {
        return credentialRefused(Refusal.Kind.UNKNOWN_IDENTITY, HttpStatus.FORBIDDEN, null, "The " + what
                + " must come from the token here; one the request states itself is not accepted.");
    }

    /** The configured answer (401 by default) for a request that carries no API key. */
    public static RefusalAnswer missingApiKey(HttpStatusCode status, String where, String challenge) {
        return credentialRefused(Refusal.Kind.MISSING_API_KEY, status, challenge,
                "This API requires an API key in " + where + ".");
    }

    /** The configured answer (401 by default) for an API key that no tier or override lists. */
    public static RefusalAnswer unknownApiKey(HttpStatusCode status, String where, String challenge) {
        return credentialRefused(Refusal.Kind.UNKNOWN_API_KEY, status, challenge,
                "The API key in " + where + " is not known here.");
    }

    /** A refused credential: with 401, {@code WWW-Authenticate} (the {@code challenge}) says where the key goes. */
    private static RefusalAnswer credentialRefused(Refusal.Kind kind, HttpStatusCode status, String challenge,
            String detail) {
        boolean unauthorized = status.value() == HttpStatus.UNAUTHORIZED.value();
        HttpStatus known = HttpStatus.resolve(status.value());
        String title = known != null ? known.getReasonPhrase() : "Error";
        return new RefusalAnswer(kind, status, List.of(), 0, null, unauthorized ? HttpHeaders.WWW_AUTHENTICATE : null,
                challenge, body -> body.problem(ABOUT_BLANK, title, status.value(), detail).put("error", kind.error()));
    }

    private static RefusalAnswer badRequest(Refusal.Kind kind, List<String> ruleIds, String detail,
            Consumer<ProblemBody> more) {
        return new RefusalAnswer(kind, HttpStatus.BAD_REQUEST, ruleIds, 0, null, null, null, body -> more.accept(
                body.problem(ABOUT_BLANK, "Bad Request", 400, detail).put("error", kind.error())));
    }

    private static ProblemBody unavailable(ProblemBody body, String detail) {
        return body.problem(ABOUT_BLANK, "Service Unavailable", 503, detail);
    }

    /** Every enforced rule the request exceeded, the reported one first; one list when there is only that one. */
    private static List<String> violatedPolicies(Verdict verdict, String reported) {
        List<String> violated = null;
        for (RuleOutcome outcome : verdict.outcomes()) {
            String id = outcome.rule().id();
            if (outcome.enforcedDenial() && !id.equals(reported)) {
                if (violated == null) {
                    violated = new ArrayList<>(verdict.outcomes().size());
                    violated.add(reported);
                }
                violated.add(id);
            }
        }
        return violated == null ? List.of(reported) : violated;
    }

    private static String retryAfter(long seconds) {
        return "; retry after " + seconds + " second" + (seconds == 1 ? "" : "s") + ".";
    }

    public Refusal.Kind kind() {
        return kind;
    }

    public HttpStatusCode status() {
        return status;
    }

    /** The rules behind the answer, as {@link RefusalContext#ruleIds()} describes them. */
    public List<String> ruleIds() {
        return ruleIds;
    }

    /** The {@code Retry-After} the answer carries, in whole seconds; 0 when it carries none. */
    public long retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /** The request's attributes when the answer was made with them, else null. */
    public RequestAttributes request() {
        return request;
    }

    /** Sets the headers this answer carries beside the rate-limit fields and {@code Content-Type}. */
    public void headers(BiConsumer<String, String> setter) {
        if (headerName != null) {
            setter.accept(headerName, headerValue);
        }
    }

    /** The default problem body, as UTF-8 JSON. */
    public byte[] body() {
        return ProblemBody.json(members).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The default problem body as a new {@link ProblemDetail}, the same members in the same order as {@link #body()}:
     * {@code type}, {@code title}, {@code status}, {@code detail}, then the extension members ({@code error}, ...).
     */
    public ProblemDetail problemDetail() {
        return ProblemBody.detail(members);
    }
}

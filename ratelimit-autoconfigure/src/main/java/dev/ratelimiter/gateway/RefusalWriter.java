package dev.ratelimiter.gateway;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import dev.ratelimiter.core.JsonText;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.Verdict;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Writes the limiter's own answers as RFC 9457 problem documents ({@code application/problem+json}) with a stable
 * {@code error} code that clients can branch on, then lets the {@link RateLimitResponseCustomizer}s change them.
 *
 * <p>A 429 has the problem type of draft-ietf-httpapi-ratelimit-headers for an exceeded quota,
 * {@value #QUOTA_EXCEEDED}, with its {@code violated-policies} member: the names of the exceeded policies, the same
 * names as in the {@code RateLimit-Policy} field. A concurrency limit is one of those policies (the draft's
 * {@code concurrent-requests} quota unit), so its 429 has that type too. The 503s and the identity answers are
 * {@code about:blank}: neither is a quota the client used up.
 */
public final class RefusalWriter {

    public static final MediaType PROBLEM_JSON = MediaType.APPLICATION_PROBLEM_JSON;

    /** The problem type for a request over one or more quota policies. */
    public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

    /** The quota-exceeded member listing the policies exceeded. */
    public static final String VIOLATED_POLICIES = "violated-policies";

    private static final RefusalWriter DEFAULTS = new RefusalWriter(List.of());

    /** Null without customizers: the default bodies are then written as text, with nothing to copy or map. */
    private final RefusalCustomizers customizers;

    /** @param customizers applied in this order to every answer */
    public RefusalWriter(List<? extends RateLimitResponseCustomizer> customizers) {
        this.customizers = customizers.isEmpty() ? null : new RefusalCustomizers(customizers, System::nanoTime);
    }

    /** The default answers, no customizer. */
    public static RefusalWriter defaults() {
        return DEFAULTS;
    }

    /** 429 for a client over its limit; the rate-limit headers must already be on the response. */
    public Mono<Void> rateLimited(ServerWebExchange exchange, Verdict verdict) {
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
        return write(exchange, kind, HttpStatus.TOO_MANY_REQUESTS, violated, retryAfter, null,
                body -> body.put("type", QUOTA_EXCEEDED).put("title", "Too Many Requests").put("status", 429)
                        .put("detail", what + retryAfter(retryAfter)).put("error", kind.error())
                        .put("retryAfter", retryAfter).put("policy", policy).put(VIOLATED_POLICIES, violated));
    }

    /** 503 for a request that a fail-closed rule could not check: the limiter, not the client, is the cause. */
    public Mono<Void> unavailable(ServerWebExchange exchange, Verdict verdict) {
        RuleOutcome limiting = verdict.limiting().orElseThrow();
        long retryAfter = RateLimitHeaders.retryAfterSeconds(limiting);
        exchange.getResponse().getHeaders().set("Retry-After", String.valueOf(retryAfter));
        String policy = limiting.rule().id();
        List<String> unchecked = verdict.outcomes().stream().map(outcome -> outcome.rule().id()).toList();
        return write(exchange, Refusal.Kind.LIMITER_UNAVAILABLE, HttpStatus.SERVICE_UNAVAILABLE, unchecked, retryAfter,
                null, body -> unavailableTitle(body)
                        .put("detail", "Rate limit '" + policy + "' cannot be checked right now"
                                + retryAfter(retryAfter))
                        .put("error", Refusal.Kind.LIMITER_UNAVAILABLE.error()).put("retryAfter", retryAfter)
                        .put("policy", policy));
    }

    /** 503 for a request shed because the upstream is full: the server is busy, the client did nothing wrong. */
    public Mono<Void> overloaded(ServerWebExchange exchange, RequestAttributes request, String upstream,
            String priority, long retryAfter) {
        exchange.getResponse().getHeaders().set("Retry-After", String.valueOf(retryAfter));
        return write(exchange, Refusal.Kind.OVERLOADED, HttpStatus.SERVICE_UNAVAILABLE, List.of(), retryAfter, request,
                body -> unavailableTitle(body)
                        .put("detail", "The service is at capacity and is shedding " + priority + " requests first"
                                + retryAfter(retryAfter))
                        .put("error", Refusal.Kind.OVERLOADED.error()).put("retryAfter", retryAfter)
                        .put("priority", priority).put("upstream", upstream));
    }

    /** 400 for a request that says twice who it is: the limiter will not pick one of the two. */
    public Mono<Void> duplicateIdentity(ServerWebExchange exchange, String headerName) {
        return badRequest(exchange, Refusal.Kind.DUPLICATE_IDENTITY, List.of(), "The " + headerName
                + " header appears more than once; send it once.", body -> body.put("header", headerName));
    }

    /** 400 for a request without a value that a rule denying such requests needs ({@code when-missing: deny}). */
    public Mono<Void> missingIdentity(ServerWebExchange exchange, String ruleId, String what) {
        return badRequest(exchange, Refusal.Kind.MISSING_IDENTITY, List.of(ruleId), "Limit '" + ruleId + "' needs "
                + what + ", which this request lacks.", body -> body.put("policy", ruleId));
    }

    /**
     * 400 for an API key that fails the configured format check: nothing is spent on it. {@code where} is the key's
     * source in words, e.g. "the X-API-Key header".
     */
    public Mono<Void> invalidApiKey(ServerWebExchange exchange, String where, String problem) {
        return badRequest(exchange, Refusal.Kind.INVALID_API_KEY, List.of(), "The API key in " + where + " "
                + problem + ".", body -> { });
    }

    /** The configured answer (401 by default) for a request that carries no API key. */
    public Mono<Void> missingApiKey(ServerWebExchange exchange, HttpStatusCode status, String where,
            String challenge) {
        return credentialRefused(exchange, Refusal.Kind.MISSING_API_KEY, status, challenge,
                "This API requires an API key in " + where + ".");
    }

    /** The configured answer (401 by default) for an API key that no tier or override lists. */
    public Mono<Void> unknownApiKey(ServerWebExchange exchange, HttpStatusCode status, String where,
            String challenge) {
        return credentialRefused(exchange, Refusal.Kind.UNKNOWN_API_KEY, status, challenge,
                "The API key in " + where + " is not known here.");
    }

    /** A refused credential: with 401, {@code WWW-Authenticate} (the {@code challenge}) says where the key goes. */
    private Mono<Void> credentialRefused(ServerWebExchange exchange, Refusal.Kind kind, HttpStatusCode status,
            String challenge, String detail) {
        if (status.value() == HttpStatus.UNAUTHORIZED.value()) {
            exchange.getResponse().getHeaders().set("WWW-Authenticate", challenge);
        }
        HttpStatus known = HttpStatus.resolve(status.value());
        String title = known != null ? known.getReasonPhrase() : "Error";
        return write(exchange, kind, status, List.of(), 0, null, body -> body.put("type", "about:blank")
                .put("title", title).put("status", status.value()).put("detail", detail).put("error", kind.error()));
    }

    private Mono<Void> badRequest(ServerWebExchange exchange, Refusal.Kind kind, List<String> ruleIds, String detail,
            Consumer<ProblemBody> more) {
        return write(exchange, kind, HttpStatus.BAD_REQUEST, ruleIds, 0, null, body -> more.accept(
                body.put("type", "about:blank").put("title", "Bad Request").put("status", 400).put("detail", detail)
                        .put("error", kind.error())));
    }

    private static ProblemBody unavailableTitle(ProblemBody body) {
        return body.put("type", "about:blank").put("title", "Service Unavailable").put("status", 503);
    }

    /** @param request the request's attributes when the caller has them, else null: the limiter's are looked up */
    private Mono<Void> write(ServerWebExchange exchange, Refusal.Kind kind, HttpStatusCode status,
            List<String> ruleIds, long retryAfter, RequestAttributes request, Consumer<ProblemBody> members) {
        ServerHttpResponse response = exchange.getResponse();
        response.getHeaders().setContentType(PROBLEM_JSON);
        // The request is looked up only for customizers: without them a refusal costs no more than its text.
        byte[] body = customizers == null ? null : customizers.apply(response, new RefusalContext(kind, ruleIds,
                retryAfter, request != null ? request : requestOf(exchange), exchange), status, members);
        if (body == null) {
            response.setStatusCode(status);
            body = ProblemBody.json(members).getBytes(StandardCharsets.UTF_8);
        }
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
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

    private static RequestAttributes requestOf(ServerWebExchange exchange) {
        return exchange.getAttribute(RateLimitFilter.REQUEST_ATTRIBUTE);
    }
}

package dev.ratelimiter.gateway;

import java.util.List;

import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Verdict;
import org.springframework.http.HttpHeaders;
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
        return write(exchange, RefusalAnswer.rateLimited(verdict));
    }

    /** 503 for a request that a fail-closed rule could not check: the limiter, not the client, is the cause. */
    public Mono<Void> unavailable(ServerWebExchange exchange, Verdict verdict) {
        return write(exchange, RefusalAnswer.unavailable(verdict));
    }

    /** 503 for a request shed because the upstream is full: the server is busy, the client did nothing wrong. */
    public Mono<Void> overloaded(ServerWebExchange exchange, RequestAttributes request, String upstream,
            String priority, long retryAfter) {
        return write(exchange, RefusalAnswer.overloaded(request, upstream, priority, retryAfter));
    }

    /** 400 for a request without a value that a rule denying such requests needs ({@code when-missing: deny}). */
    public Mono<Void> missingIdentity(ServerWebExchange exchange, String ruleId, String what) {
        return write(exchange, RefusalAnswer.missingIdentity(ruleId, what));
    }

    /**
     * 400 for an API key that fails the configured format check: nothing is spent on it. {@code where} is the key's
     * source in words, e.g. "the X-API-Key header".
     */
    public Mono<Void> invalidApiKey(ServerWebExchange exchange, String where, String problem) {
        return write(exchange, RefusalAnswer.invalidApiKey(where, problem));
    }

    /** The configured answer (401 by default) for a request that carries no API key. */
    public Mono<Void> missingApiKey(ServerWebExchange exchange, HttpStatusCode status, String where,
            String challenge) {
        return write(exchange, RefusalAnswer.missingApiKey(status, where, challenge));
    }

    /** The configured answer (401 by default) for an API key that no tier or override lists. */
    public Mono<Void> unknownApiKey(ServerWebExchange exchange, HttpStatusCode status, String where,
            String challenge) {
        return write(exchange, RefusalAnswer.unknownApiKey(status, where, challenge));
    }

    /** Writes an answer, through the customizers when there are any. */
    public Mono<Void> write(ServerWebExchange exchange, RefusalAnswer answer) {
        ServerHttpResponse response = exchange.getResponse();
        HttpHeaders headers = response.getHeaders();
        // The request is looked up only for customizers: without them a refusal costs no more than its text.
        Rendered rendered = render(answer, headers, customizers == null ? null : requestOf(exchange), exchange);
        response.setStatusCode(rendered.status());
        if (rendered.headers() != headers) {
            headers.clear();
            headers.putAll(rendered.headers());
        }
        headers.setContentLength(rendered.body().length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(rendered.body())));
    }

    /**
     * An answer as it is to be sent, on any web stack: its status, the headers (the given ones with the answer's
     * own, or the customizers' changed copy) and its body.
     *
     * @param headers the response headers so far (the rate-limit fields); the answer's own are set on them
     * @param request the request's attributes for the customizers, when the answer does not carry them; may be null
     * @param exchange the WebFlux exchange, for the customizers to read; null on the Server MVC flavour
     */
    public Rendered render(RefusalAnswer answer, HttpHeaders headers, RequestAttributes request,
            ServerWebExchange exchange) {
        answer.headers(headers::set);
        headers.setContentType(PROBLEM_JSON);
        if (customizers != null) {
            RefusalContext context = new RefusalContext(answer.kind(), answer.ruleIds(), answer.retryAfterSeconds(),
                    answer.request() != null ? answer.request() : request, exchange);
            Rendered customized = customizers.apply(headers, context, answer.status(), answer.members());
            if (customized != null) {
                return customized;
            }
        }
        return new Rendered(answer.status(), headers, answer.body());
    }

    /** An answer ready to send. */
    public record Rendered(HttpStatusCode status, HttpHeaders headers, byte[] body) {
    }

    private static RequestAttributes requestOf(ServerWebExchange exchange) {
        return exchange.getAttribute(RateLimitFilter.REQUEST_ATTRIBUTE);
    }
}

package dev.ratelimiter.gateway.webflux;

import java.util.List;

import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.gateway.RateLimitResponseCustomizer;
import dev.ratelimiter.gateway.RefusalAnswer;
import dev.ratelimiter.gateway.RefusalRenderer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Writes the limiter's own answers on a WebFlux exchange: what each says is {@link RefusalRenderer}'s (shared with the
 * Server MVC flavour), how it is sent is this class's.
 */
public final class RefusalWriter {

    private static final RefusalWriter DEFAULTS = new RefusalWriter(List.of());

    private final RefusalRenderer renderer;

    /** @param customizers applied in this order to every answer */
    public RefusalWriter(List<? extends RateLimitResponseCustomizer> customizers) {
        this.renderer = new RefusalRenderer(customizers);
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
        RefusalRenderer.Rendered rendered = renderer.render(answer, headers,
                renderer.customized() ? exchange.getAttribute(RateLimitFilter.REQUEST_ATTRIBUTE) : null, exchange);
        response.setStatusCode(rendered.status());
        if (rendered.headers() != headers) {
            headers.clear();
            headers.putAll(rendered.headers());
        }
        headers.setContentLength(rendered.body().length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(rendered.body())));
    }
}

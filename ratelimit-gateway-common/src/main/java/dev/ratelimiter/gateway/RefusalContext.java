package dev.ratelimiter.gateway;

import java.util.List;

import dev.ratelimiter.core.RequestAttributes;
import org.springframework.web.server.ServerWebExchange;

/**
 * What a {@linkplain RateLimitResponseCustomizer customizer} may read about a refusal: nothing here changes the
 * answer.
 *
 * @param kind which answer it is
 * @param ruleIds the rules behind it: for 429 every enforced rule the request exceeded (the body's
 * {@code violated-policies}), for a limiter that could not check the rules it could not check, for a missing
 * identity the rule that needs it; empty for shedding and the API-key answers
 * @param retryAfterSeconds the {@code Retry-After} the answer carries, in whole seconds; 0 when it carries none (the
 * 400/401/403 answers: waiting does not help)
 * @param request the request as the limiter saw it; {@code null} when it was refused before its identity was known
 * (the 400/401/403 answers other than a missing identity), or shed on a route the limiter did not see
 * @param nativeExchange the web flavour's own view of the exchange being answered, to read (its request, attributes,
 * principal); writing its response here is not supported: on Spring Cloud Gateway (WebFlux) the
 * {@code ServerWebExchange}, on Gateway Server MVC the {@code HttpServletRequest}. Read it through
 * {@link #nativeExchange(Class)}
 */
public record RefusalContext(Refusal.Kind kind, List<String> ruleIds, long retryAfterSeconds,
        RequestAttributes request, Object nativeExchange) {

    /**
     * The flavour's exchange as the given type, or null on the other flavour: e.g.
     * {@code nativeExchange(ServerWebExchange.class)} on WebFlux, {@code nativeExchange(HttpServletRequest.class)} on
     * Server MVC.
     */
    public <T> T nativeExchange(Class<T> type) {
        return type.isInstance(nativeExchange) ? type.cast(nativeExchange) : null;
    }

    /**
     * The WebFlux exchange, as before the flavours shared this type; null on Server MVC.
     *
     * @deprecated the shared layer names no web stack: read {@code nativeExchange(ServerWebExchange.class)}. Kept so
     * that customizers written against it compile and link unchanged (spring-web, which holds the type, is on both
     * flavours' class paths).
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public ServerWebExchange exchange() {
        return nativeExchange(ServerWebExchange.class);
    }
}

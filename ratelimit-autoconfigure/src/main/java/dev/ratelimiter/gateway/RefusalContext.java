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
 * @param exchange the exchange being answered, to read (its request, attributes, principal); writing its response
 * here is not supported. {@code null} on the Spring Cloud Gateway Server MVC flavour, which has no exchange: read
 * {@code request} there
 */
public record RefusalContext(Refusal.Kind kind, List<String> ruleIds, long retryAfterSeconds,
        RequestAttributes request, ServerWebExchange exchange) {
}

package dev.ratelimiter.gateway;

import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Who is calling: the API key, user and tenant the rules key on, and the tier when a trusted source says it. Declare a
 * bean of this type to replace the one configured from {@code ratelimit.identity.*}.
 *
 * <p>The limiter's own header resolver ({@link RequestIdentity}) is answered without a {@link Mono}: the filter reads
 * the headers directly, as it always did. Any other resolver is subscribed once per request, on the request's event
 * loop, and must not block; an error or an empty answer is a request without identity (a rule that needs a value it
 * lacks then shares one bucket or refuses it with 400, as its {@code when-missing} says), never a 5xx. Its
 * {@linkplain IdentityDescriber descriptions} name the sources in the answers.
 */
@FunctionalInterface
public interface RequestIdentityResolver extends IdentityDescriber {

    /** The caller of this exchange; values it lacks are null. */
    Mono<CallerIdentity> resolve(ServerWebExchange exchange);
}

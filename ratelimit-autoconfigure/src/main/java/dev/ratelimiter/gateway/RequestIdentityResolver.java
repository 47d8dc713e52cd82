package dev.ratelimiter.gateway;

import dev.ratelimiter.core.Dimension;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Who is calling: the API key, user and tenant the rules key on, and the tier when a trusted source says it. Declare a
 * bean of this type to replace the one configured from {@code ratelimit.identity.*}.
 *
 * <p>The limiter's own header resolver ({@link RequestIdentity}) is answered without a {@link Mono}: the filter reads
 * the headers directly, as it always did. Any other resolver is subscribed once per request, on the request's event
 * loop, and must not block; an error or an empty answer is a request without identity (a rule that needs a value it
 * lacks then shares one bucket or refuses it with 400, as its {@code when-missing} says), never a 5xx.
 */
@FunctionalInterface
public interface RequestIdentityResolver {

    /** The caller of this exchange; values it lacks are null. */
    Mono<CallerIdentity> resolve(ServerWebExchange exchange);

    /**
     * Where a dimension's value comes from, in words a client can act on, e.g. "the X-Tenant-Id header" or "the
     * tenant_id claim of the token": refusals say what the request lacks.
     */
    default String describe(Dimension dimension) {
        return switch (dimension) {
            case API_KEY -> "an API key";
            case USER -> "a user id";
            case TENANT -> "a tenant id";
            case CLIENT_IP -> "a client address";
            case ROUTE, ROUTE_CLASS -> "a route";
            case TIER -> "a tier";
        };
    }

    /** The {@code WWW-Authenticate} challenge of a 401 for a request without (or with an unknown) API key. */
    default String challenge() {
        return "Bearer";
    }
}

package dev.ratelimiter.gateway;

import dev.ratelimiter.core.Dimension;

/**
 * How the limiter names the sources of a caller's identity in its answers, whatever the web stack: a refusal says what
 * the request lacks, and a 401 which credential it asks for.
 */
public interface IdentityDescriber {

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

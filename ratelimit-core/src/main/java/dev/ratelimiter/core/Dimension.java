package dev.ratelimiter.core;

/**
 * What a rule's bucket is per: one bucket for each distinct value (or combination of values) of its dimensions.
 */
public enum Dimension {
    /** The client's API key: one bucket per customer. */
    API_KEY,
    /** The end user, from the user header set by the authentication in front of the limiter. */
    USER,
    /** The tenant, from the tenant header set by the authentication in front of the limiter. */
    TENANT,
    /** The client's IP address (X-Forwarded-For honoured only from trusted proxies). */
    CLIENT_IP,
    /** The matched route: with no other dimension, one bucket summed over every client (a per-endpoint cap). */
    ROUTE,
    /** The route class of the matched route. */
    ROUTE_CLASS,
    /** The client's tier. */
    TIER;

    /** The request's value for this dimension, or null when the request has none. */
    String valueOf(RequestAttributes request) {
        return switch (this) {
            case API_KEY -> request.apiKey();
            case USER -> request.user();
            case TENANT -> request.tenant();
            case CLIENT_IP -> request.clientIp();
            case ROUTE -> request.routeId();
            case ROUTE_CLASS -> request.routeClass();
            case TIER -> request.tier();
        };
    }
}

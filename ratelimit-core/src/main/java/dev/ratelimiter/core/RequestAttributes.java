package dev.ratelimiter.core;

/**
 * What the limiter knows of one request. Any field but {@code routeClass}, {@code tier} and {@code path} may be
 * null; a rule whose key needs a missing value does not apply to the request.
 *
 * @param apiKey the API key as sent (hashed before it is stored anywhere)
 * @param user end-user id
 * @param tenant tenant id
 * @param clientIp client address
 * @param routeId id of the matched route
 * @param path request path, normalised ({@link RequestPaths#normalise})
 * @param routeClass route class of the matched route
 * @param tier the client's tier
 * @param cost tokens the request costs unless a rule says otherwise
 */
public record RequestAttributes(String apiKey, String user, String tenant, String clientIp, String routeId, String path,
        String routeClass, String tier, int cost) {

    /**
     * What is known of a request the rate limiter did not see (it is off, or ordered after the caller): its route
     * only, no identity, no tier, cost 1.
     */
    public static RequestAttributes ofRoute(String routeId, String path, String routeClass) {
        return new RequestAttributes(null, null, null, null, routeId, path, routeClass, null, 1);
    }
}

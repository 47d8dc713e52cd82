package dev.ratelimiter.gateway;

import java.util.Map;
import java.util.function.Supplier;

/**
 * What the admission pipeline reads of a request besides its caller, whatever the web stack: each flavour answers it
 * from its own request without copying anything it may not need.
 *
 * @param rawPath the request path as the client sent it (not decoded)
 * @param routeId the id of the gateway route that took it, or null
 * @param routeMetadata that route's metadata (route class, cost, opt-out); empty when it has none
 * @param clientIp the client's network as a bucket name, or null; asked only when a rule or an identity policy
 * counts by address
 * @param http the request as cost expressions read it ({@link CostExpressions}); null: every rule's cost standard
 */
public record AdmissionRequest(String rawPath, String routeId, Map<String, Object> routeMetadata,
        Supplier<String> clientIp, IdentityRequest http) {

    /** A request whose rules' costs are all standard. */
    public AdmissionRequest(String rawPath, String routeId, Map<String, Object> routeMetadata,
            Supplier<String> clientIp) {
        this(rawPath, routeId, routeMetadata, clientIp, null);
    }
}

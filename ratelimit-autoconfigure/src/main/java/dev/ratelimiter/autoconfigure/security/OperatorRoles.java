package dev.ratelimiter.autoconfigure.security;

import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The roles the endpoints check themselves, behind the web filter: a request can reach an endpoint without passing
 * the filter (a gateway route to {@code forward:/actuator/...} is dispatched inside the server, past every web
 * filter), so when the endpoints are authenticated each operation also asks who is calling.
 *
 * @param enforced whether the endpoints are authenticated ({@link OperatorEndpointExposure#secured()})
 */
public record OperatorRoles(boolean enforced) {

    /** A 403 unless the caller may change limits; null when it may. */
    public @Nullable WebEndpointResponse<Map<String, Object>> refuseUnlessAdmin(SecurityContext caller) {
        return enforced && !caller.isUserInRole(OperatorAccounts.Role.ADMIN.roleName())
                ? forbidden("Changing limits and switches needs the " + OperatorAccounts.Role.ADMIN.roleName()
                        + " role.")
                : null;
    }

    /** A 403 unless the caller may read the rules; null when it may. */
    public @Nullable WebEndpointResponse<Map<String, Object>> refuseUnlessReader(SecurityContext caller) {
        return enforced && !caller.isUserInRole(OperatorAccounts.Role.ADMIN.roleName())
                && !caller.isUserInRole(OperatorAccounts.Role.VIEWER.roleName())
                ? forbidden("Reading the rules needs the " + OperatorAccounts.Role.VIEWER.roleName() + " or "
                        + OperatorAccounts.Role.ADMIN.roleName() + " role.")
                : null;
    }

    private static WebEndpointResponse<Map<String, Object>> forbidden(String reason) {
        return new WebEndpointResponse<>(Map.of("error", "forbidden", "reason", reason), 403);
    }
}

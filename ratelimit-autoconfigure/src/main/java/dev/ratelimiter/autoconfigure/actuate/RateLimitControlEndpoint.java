package dev.ratelimiter.autoconfigure.actuate;

import java.util.Map;

import dev.ratelimiter.autoconfigure.rules.RuleChangeResponse;
import dev.ratelimiter.autoconfigure.security.OperatorRoles;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuntimeRules;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * {@code /actuator/ratelimitcontrol}: the switches of the rollback ladder, shared by every instance through the
 * rule store. POST {@code {"killSwitch": true}} hard-allows every request; POST
 * {@code {"tier": "free", "enforce": false}} puts one tier's rules in shadow.
 */
@Endpoint(id = "ratelimitcontrol")
public class RateLimitControlEndpoint {

    private final RuleAdmin admin;
    private final OperatorRoles roles;

    public RateLimitControlEndpoint(RuleAdmin admin, OperatorRoles roles) {
        this.admin = admin;
        this.roles = roles;
    }

    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> set(@Nullable Boolean killSwitch, @Nullable String tier,
            @Nullable Boolean enforce, SecurityContext caller) {
        WebEndpointResponse<Map<String, Object>> refused = roles.refuseUnlessAdmin(caller);
        if (refused != null) {
            return refused;
        }
        String operator = RateLimitRulesEndpoint.operator(caller);
        if (killSwitch != null && tier == null && enforce == null) {
            return RuleChangeResponse.of(admin.control(RuntimeRules.KILL_SWITCH, killSwitch, operator));
        }
        if (killSwitch == null && tier != null && enforce != null) {
            return RuleChangeResponse.of(admin.control(RuntimeRules.enforceKey(tier), enforce, operator));
        }
        return new WebEndpointResponse<>(Map.of("error", "invalid_control", "reason",
                "Send either {\"killSwitch\": true|false} or {\"tier\": \"name\", \"enforce\": true|false}."), 400);
    }
}

package dev.ratelimiter.autoconfigure.rules;

import java.security.Principal;

import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.autoconfigure.security.OperatorAuthentication;
import dev.ratelimiter.autoconfigure.security.OperatorRoles;
import dev.ratelimiter.autoconfigure.security.OperatorSecurityFilter;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;

/**
 * The roles the rules API checks itself, behind the filter that authenticates it ({@link OperatorSecurityFilter}):
 * as for the actuator's operations ({@link OperatorRoles}), a request can reach the API without passing that filter
 * (a gateway route to {@code forward:/actuator/v1/rules/...} is dispatched inside the server), so every handler asks
 * who is calling as well.
 */
public interface RulesApiAccess {

    /** Whether the caller may read the rules. */
    boolean mayRead(Principal caller);

    /** Whether the caller may change them. */
    boolean mayWrite(Principal caller);

    /** Anybody may do anything: the actuator's endpoints are not authenticated either (a loopback port). */
    RulesApiAccess OPEN = new RulesApiAccess() {

        @Override
        public boolean mayRead(Principal caller) {
            return true;
        }

        @Override
        public boolean mayWrite(Principal caller) {
            return true;
        }
    };

    /** Whether Spring Security's Authentication can be asked at all (a loopback-only port needs no Spring Security). */
    boolean SPRING_SECURITY_CORE = org.springframework.util.ClassUtils.isPresent(
            "org.springframework.security.core.Authentication", RulesApiAccess.class.getClassLoader());

    /**
     * The operator accounts' roles, as the filter granted them: Spring Security's authorities, on both flavours.
     */
    static RulesApiAccess byRole() {
        return new RulesApiAccess() {

            @Override
            public boolean mayRead(Principal caller) {
                return has(caller, OperatorAccounts.Role.VIEWER) || has(caller, OperatorAccounts.Role.ADMIN);
            }

            @Override
            public boolean mayWrite(Principal caller) {
                return has(caller, OperatorAccounts.Role.ADMIN);
            }

            private boolean has(Principal caller, OperatorAccounts.Role role) {
                return SPRING_SECURITY_CORE && caller instanceof Authentication authentication
                        && authentication.isAuthenticated()
                        && authentication.getAuthorities().stream().map(GrantedAuthority::getAuthority)
                                .anyMatch(OperatorAuthentication.authority(role)::equals);
            }
        };
    }
}

package dev.ratelimiter.gateway;

import java.security.Principal;

import org.springframework.web.server.ServerWebExchange;

/**
 * The authenticated principal's name, as the exchange's {@link ServerWebExchange#getPrincipal() principal} gives it:
 * with Spring Security that is the {@code Authentication} of the reactive security context (for a JWT resource server,
 * the token's {@code sub}).
 */
final class PrincipalSource implements IdentitySource {

    static final PrincipalSource INSTANCE = new PrincipalSource();

    /** By name, so that this class loads without Spring Security: every anonymous caller would share one name. */
    private static final String ANONYMOUS = "org.springframework.security.authentication.AnonymousAuthenticationToken";

    private PrincipalSource() {
    }

    @Override
    public String read(ServerWebExchange exchange, Principal principal) {
        if (principal == null || principal.getClass().getName().equals(ANONYMOUS)) {
            return null;
        }
        return CallerIdentity.nonBlank(principal.getName());
    }

    @Override
    public String describe() {
        return "an authenticated principal";
    }

    @Override
    public boolean readsPrincipal() {
        return true;
    }
}

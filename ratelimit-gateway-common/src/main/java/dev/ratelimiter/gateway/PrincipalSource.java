package dev.ratelimiter.gateway;

import java.security.Principal;

/**
 * The authenticated principal's name: with Spring Security the {@code Authentication} of the security context (the
 * WebFlux exchange's principal, the servlet request's user principal); for a JWT resource server, the token's
 * {@code sub}. An anonymous authentication is nobody.
 */
final class PrincipalSource implements IdentitySource {

    static final PrincipalSource INSTANCE = new PrincipalSource();

    /** By name, so that this class loads without Spring Security: every anonymous caller would share one name. */
    private static final String ANONYMOUS = "org.springframework.security.authentication.AnonymousAuthenticationToken";

    private PrincipalSource() {
    }

    @Override
    public String read(IdentityRequest request, Principal principal) {
        if (principal == null || principal.getClass().getName().equals(ANONYMOUS)) {
            return null;
        }
        return CallerIdentity.nonBlank(principal.getName());
    }

    @Override
    public IdentityOrigin origin() {
        return IdentityOrigin.PRINCIPAL;
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

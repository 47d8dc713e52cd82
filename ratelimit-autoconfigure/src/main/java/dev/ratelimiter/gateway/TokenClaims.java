package dev.ratelimiter.gateway;

import java.security.Principal;
import java.util.Map;

import org.springframework.security.core.Authentication;
import org.springframework.security.oauth2.core.ClaimAccessor;

/**
 * The claims of the token a caller authenticated with: a JWT ({@code JwtAuthenticationToken}, whose principal is the
 * {@code Jwt}), an introspected opaque token, an OIDC user. Only loaded when Spring Security's OAuth2 classes are on
 * the classpath ({@link ClaimSource#available}).
 */
final class TokenClaims {

    private TokenClaims() {
    }

    /** The token's claims, or an empty map when the caller has none (anonymous, or signed in otherwise). */
    static Map<String, Object> of(Principal principal) {
        ClaimAccessor claims = accessor(principal);
        return claims != null ? claims.getClaims() : Map.of();
    }

    /** One claim as a string (a list as its elements joined by commas), or null. */
    static String claim(Principal principal, String name) {
        ClaimAccessor claims = accessor(principal);
        return claims != null ? CallerIdentity.nonBlank(claims.getClaimAsString(name)) : null;
    }

    private static ClaimAccessor accessor(Principal principal) {
        if (principal instanceof Authentication authentication
                && authentication.getPrincipal() instanceof ClaimAccessor claims) {
            return claims;
        }
        return principal instanceof ClaimAccessor claims ? claims : null;
    }
}

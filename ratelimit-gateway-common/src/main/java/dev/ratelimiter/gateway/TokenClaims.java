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

    /**
     * One claim as a string, as Spring Security converts it ({@code [a, b]} for a list), or null. A JSON object is no
     * identity: read as a string it would be the map's {@code toString()}, whose order and form no issuer promises, so
     * it is null.
     */
    static String claim(Principal principal, String name) {
        ClaimAccessor claims = accessor(principal);
        if (claims == null || claims.getClaims().get(name) instanceof Map) {
            return null;
        }
        return CallerIdentity.nonBlank(claims.getClaimAsString(name));
    }

    private static ClaimAccessor accessor(Principal principal) {
        if (principal instanceof Authentication authentication
                && authentication.getPrincipal() instanceof ClaimAccessor claims) {
            return claims;
        }
        return principal instanceof ClaimAccessor claims ? claims : null;
    }
}

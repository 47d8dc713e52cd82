package dev.ratelimiter.gateway;

import java.security.Principal;

import org.springframework.util.ClassUtils;

/**
 * A claim of the token the caller authenticated with, e.g. {@code azp} for the API key or {@code tenant_id} for the
 * tenant. A caller without a token, or a token without the claim, has no value. Needs Spring Security's OAuth2
 * classes ({@link #available}).
 *
 * @param claim the claim's name
 */
public record ClaimSource(String claim) implements IdentitySource {

    @Override
    public String read(IdentityRequest request, Principal principal) {
        return principal == null ? null : TokenClaims.claim(principal, claim);
    }

    @Override
    public IdentityOrigin origin() {
        return IdentityOrigin.CLAIM;
    }

    @Override
    public String describe() {
        return "the " + claim + " claim of the token";
    }

    @Override
    public boolean readsPrincipal() {
        return true;
    }

    /** The class of Spring Security's OAuth2 claims, looked for by name ({@link #available}). */
    public static final String OAUTH2_CLAIMS = "org.springframework.security.oauth2.core.ClaimAccessor";

    /** Spring Security's authentication, looked for by name ({@link #available}). */
    public static final String AUTHENTICATION = "org.springframework.security.core.Authentication";

    /** Whether claims can be read at all: Spring Security's OAuth2 classes are on this class loader's classpath. */
    public static boolean available(ClassLoader loader) {
        // Checked by name, here and not in TokenClaims, so that asking never loads a class that needs them.
        return ClassUtils.isPresent(OAUTH2_CLAIMS, loader) && ClassUtils.isPresent(AUTHENTICATION, loader);
    }
}

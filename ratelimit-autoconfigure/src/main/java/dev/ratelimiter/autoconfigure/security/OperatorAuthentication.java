package dev.ratelimiter.autoconfigure.security;

import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.authority.AuthorityUtils;

/**
 * The operator accounts as Spring Security sees them, the same on both flavours' chains: a Basic login checked
 * against {@link OperatorAccounts}, and the authority each role is granted and asked for.
 */
public final class OperatorAuthentication {

    private OperatorAuthentication() {
    }

    /**
     * The authenticated account of these credentials, with its role's authority; a wrong name and a wrong password
     * fail alike. Can cost a password hash's work (bcrypt): the WebFlux chain calls it off the event loop.
     */
    public static Authentication authenticate(OperatorAccounts accounts, Authentication offered) {
        OperatorAccounts.Role role = accounts.verify(offered.getName(), String.valueOf(offered.getCredentials()));
        if (role == null) {
            throw new BadCredentialsException("Bad credentials");
        }
        return UsernamePasswordAuthenticationToken.authenticated(offered.getName(), null,
                AuthorityUtils.createAuthorityList(authority(role)));
    }

    /**
     * The authority a role grants, asked for as it is (not through {@code hasRole}, whose prefix an application can
     * change with a {@code GrantedAuthorityDefaults} bean).
     */
    public static String authority(OperatorAccounts.Role role) {
        return "ROLE_" + role.roleName();
    }
}

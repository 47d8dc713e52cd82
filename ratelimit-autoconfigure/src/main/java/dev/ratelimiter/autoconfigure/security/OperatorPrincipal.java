package dev.ratelimiter.autoconfigure.security;

import java.security.Principal;

import dev.ratelimiter.autoconfigure.rules.RulesApiAccess;

/**
 * An operator account the servlet flavour's filter authenticated (without Spring Security): its name and role, for
 * the rules API's checks ({@link RulesApiAccess}) and the request's {@code isUserInRole} the endpoints ask.
 *
 * @param name the account's user name
 * @param role what it may do
 */
public record OperatorPrincipal(String name, OperatorAccounts.Role role) implements Principal {

    @Override
    public String getName() {
        return name;
    }

    /** Whether the account has this role name ({@code RATELIMIT_ADMIN}, {@code RATELIMIT_VIEWER}). */
    public boolean hasRole(String roleName) {
        return role.roleName().equals(roleName);
    }
}

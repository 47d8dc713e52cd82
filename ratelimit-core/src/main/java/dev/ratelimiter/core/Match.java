package dev.ratelimiter.core;

import java.util.List;
import java.util.Set;

/**
 * Which requests a rule applies to. Every criterion given must hold; an empty criterion matches anything.
 *
 * <p>When several rules of one group match a request, the most specific applies. Specificity adds up the
 * criteria present: API keys 16, route ids 8, paths 4, route classes 2, tiers 1. So a customer override beats a
 * route rule, which beats a route-class rule, which beats a tier default.
 *
 * @param routeIds gateway route ids
 * @param paths path globs ({@code /api/**})
 * @param routeClasses route classes
 * @param tiers client tiers
 * @param apiKeys specific customers: API keys as sent (from configuration) or {@linkplain HashedApiKey hashed}, as the
 * rule store holds them; either way a request is matched by its client id, through {@link RuleSet}'s index
 */
public record Match(Set<String> routeIds, List<String> paths, Set<String> routeClasses, Set<String> tiers,
        Set<String> apiKeys) {

    /** Matches every request. */
    public static final Match ANY = new Match(Set.of(), List.of(), Set.of(), Set.of(), Set.of());

    public Match {
        routeIds = Set.copyOf(routeIds);
        paths = List.copyOf(paths);
        routeClasses = Set.copyOf(routeClasses);
        tiers = Set.copyOf(tiers);
        apiKeys = Set.copyOf(apiKeys);
        for (String apiKey : apiKeys) {
            if (HashedApiKey.looksHashed(apiKey) && HashedApiKey.parse(apiKey) == null) {
                throw new InvalidLimitException("match.api-keys", "match.api-keys has a value that starts like a hashed "
                        + "API key but is not one; expected " + HashedApiKey.EXPECTED_FORM + ".");
            }
        }
    }

    /**
     * Whether the request meets every criterion but the API keys: those are {@link RuleSet}'s to check, which finds
     * a customer's overrides by its client id and never considers them for anyone else.
     */
    boolean matchesApartFromApiKeys(RequestAttributes request, List<PathPattern> compiledPaths) {
        return (routeIds.isEmpty() || routeIds.contains(request.routeId()))
                && (compiledPaths.isEmpty() || compiledPaths.stream().anyMatch(p -> p.matches(request.path())))
                && (routeClasses.isEmpty() || routeClasses.contains(request.routeClass()))
                && (tiers.isEmpty() || tiers.contains(request.tier()));
    }

    int specificity() {
        return (apiKeys.isEmpty() ? 0 : 16) + (routeIds.isEmpty() ? 0 : 8) + (paths.isEmpty() ? 0 : 4)
                + (routeClasses.isEmpty() ? 0 : 2) + (tiers.isEmpty() ? 0 : 1);
    }
}

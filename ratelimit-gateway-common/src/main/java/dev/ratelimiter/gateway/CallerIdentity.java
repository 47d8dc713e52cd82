package dev.ratelimiter.gateway;

import java.util.EnumMap;
import java.util.Map;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.RuleSet;

/**
 * Who a request comes from, as a web flavour's identity resolver tells it. Blank values count as missing.
 *
 * @param apiKey the API key (picks the tier and the per-key overrides), or null
 * @param user the end-user id, or null
 * @param tenant the tenant id, or null
 * @param tier the tier as a trusted source names it (a claim of a verified token, a header the authentication sets),
 * or null to look it up by the API key; a name no tier has is looked up by the key as well
 * @param ambiguous the dimensions the request names twice (a header or query parameter sent twice), with that name:
 * the request is refused with 400 when a rule reads that dimension (the API key always counts)
 * @param origins where each value came from ({@link Dimension#TIER} for the tier); a value without one is
 * {@link IdentityOrigin#RESOLVER}'s, the operator's own code, trusted as given
 */
public record CallerIdentity(String apiKey, String user, String tenant, String tier,
        Map<Dimension, RepeatedName> ambiguous, Map<Dimension, IdentityOrigin> origins) {

    /** A request nobody could identify. */
    public static final CallerIdentity NONE = new CallerIdentity(null, null, null, null, Map.of());

    public CallerIdentity {
        apiKey = nonBlank(apiKey);
        user = nonBlank(user);
        tenant = nonBlank(tenant);
        tier = nonBlank(tier);
        ambiguous = Map.copyOf(ambiguous);
        origins = Map.copyOf(origins);
    }

    /** A caller an application's own resolver names: every value its code's, trusted as given. */
    public CallerIdentity(String apiKey, String user, String tenant, String tier,
            Map<Dimension, RepeatedName> ambiguous) {
        this(apiKey, user, tenant, tier, ambiguous, Map.of());
    }

    /** An unambiguous caller. */
    public static CallerIdentity of(String apiKey, String user, String tenant, String tier) {
        return new CallerIdentity(apiKey, user, tenant, tier, Map.of());
    }

    /**
     * The source this request named twice, of those the rules read (the API key always counts), or null: such a
     * request is refused with 400 rather than decided on a value the client chose.
     */
    public RepeatedName ambiguousFor(RuleSet rules) {
        if (ambiguous.isEmpty()) {
            return null;
        }
        RepeatedName source = ambiguous.get(Dimension.API_KEY);
        if (source == null && rules.needsUser()) {
            source = ambiguous.get(Dimension.USER);
        }
        return source == null && rules.needsTenant() ? ambiguous.get(Dimension.TENANT) : source;
    }

    /** Where this dimension's value came from. */
    public IdentityOrigin origin(Dimension dimension) {
        return origins.getOrDefault(dimension, IdentityOrigin.RESOLVER);
    }

    /** The value of the API key, user or tenant as the rules see it: in its origin's namespace; null when absent. */
    public String qualified(Dimension dimension) {
        return origin(dimension).qualify(switch (dimension) {
            case API_KEY -> apiKey;
            case USER -> user;
            case TENANT -> tenant;
            default -> throw new IllegalArgumentException(dimension + " is no value a caller states");
        });
    }

    /** The same caller with the API key another source gave. */
    public CallerIdentity withApiKey(String key, IdentityOrigin origin) {
        Map<Dimension, IdentityOrigin> changed = new EnumMap<>(Dimension.class);
        changed.putAll(origins);
        changed.put(Dimension.API_KEY, origin);
        return new CallerIdentity(key, user, tenant, tier, ambiguous, changed);
    }

    static String nonBlank(String value) {
        return value == null || value.isBlank() ? null : value;
    }
}

package dev.ratelimiter.gateway;

import java.util.Map;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.RuleSet;

/**
 * Who a request comes from, as a {@link RequestIdentityResolver} tells it. Blank values count as missing.
 *
 * @param apiKey the API key (picks the tier and the per-key overrides), or null
 * @param user the end-user id, or null
 * @param tenant the tenant id, or null
 * @param tier the tier as a trusted source names it (a claim of a verified token, a header the authentication sets),
 * or null to look it up by the API key; a name no tier has is looked up by the key as well
 * @param ambiguous the dimensions the request names twice (a header or query parameter sent twice), with that name:
 * the request is refused with 400 when a rule reads that dimension (the API key always counts)
 */
public record CallerIdentity(String apiKey, String user, String tenant, String tier,
        Map<Dimension, RepeatedName> ambiguous) {

    /** A request nobody could identify. */
    public static final CallerIdentity NONE = new CallerIdentity(null, null, null, null, Map.of());

    public CallerIdentity {
        apiKey = nonBlank(apiKey);
        user = nonBlank(user);
        tenant = nonBlank(tenant);
        tier = nonBlank(tier);
        ambiguous = Map.copyOf(ambiguous);
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

    static String nonBlank(String value) {
        return value == null || value.isBlank() ? null : value;
    }
}

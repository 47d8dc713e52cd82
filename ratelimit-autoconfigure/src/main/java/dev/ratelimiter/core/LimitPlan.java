package dev.ratelimiter.core;

import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Which limit applies to which request: API keys map to tiers (unknown keys get the default tier), and
 * each tier has a limit per route class.
 *
 * <p>Resolution, in order: the tier's limit for the request's route class; else the tier's limit for the
 * route class {@value #DEFAULT_ROUTE_CLASS} (and the request then shares that bucket); else no limit.
 */
public final class LimitPlan {

    /** Route class of routes that name none, and the fallback limit of every tier. */
    public static final String DEFAULT_ROUTE_CLASS = "default";

    private final String defaultTier;
    private final Map<String, String> tierByApiKey;
    private final Map<String, Map<String, TokenBucketLimit>> limitsByTier;

    private LimitPlan(Builder builder) {
        this.defaultTier = builder.defaultTier;
        this.tierByApiKey = Map.copyOf(builder.tierByApiKey);
        Map<String, Map<String, TokenBucketLimit>> limits = new HashMap<>();
        builder.limitsByTier.forEach((tier, byClass) -> limits.put(tier, Map.copyOf(byClass)));
        this.limitsByTier = Map.copyOf(limits);
    }

    /** The policy name of a tier's limit for a route class, e.g. {@code free.default}. */
    public static String policyName(String tier, String routeClass) {
        return tier + "." + routeClass;
    }

    public static Builder builder(String defaultTier) {
        return new Builder(defaultTier);
    }

    public String tierOf(String apiKey) {
        return tierByApiKey.getOrDefault(apiKey, defaultTier);
    }

    public Optional<TokenBucketLimit> limitFor(String tier, String routeClass) {
        Map<String, TokenBucketLimit> byClass = limitsByTier.getOrDefault(tier, Collections.emptyMap());
        TokenBucketLimit limit = byClass.get(routeClass);
        return Optional.ofNullable(limit != null ? limit : byClass.get(DEFAULT_ROUTE_CLASS));
    }

    public String defaultTier() {
        return defaultTier;
    }

    /** Collects tiers, their API keys and limits, and refuses a plan that contradicts itself. */
    public static final class Builder {

        private final String defaultTier;
        private final Map<String, String> tierByApiKey = new HashMap<>();
        private final Map<String, Map<String, TokenBucketLimit>> limitsByTier = new LinkedHashMap<>();

        private Builder(String defaultTier) {
            this.defaultTier = defaultTier;
        }

        public Builder tier(String tier) {
            PolicyNames.requireValid("ratelimit.tiers." + tier, tier);
            limitsByTier.computeIfAbsent(tier, t -> new LinkedHashMap<>());
            return this;
        }

        public Builder apiKey(String apiKey, String tier) {
            tier(tier);
            if (apiKey == null || apiKey.isBlank()) {
                throw new InvalidLimitException("ratelimit.tiers." + tier + ".api-keys",
                        "ratelimit.tiers." + tier + ".api-keys contains an empty API key.");
            }
            String previous = tierByApiKey.putIfAbsent(apiKey, tier);
            if (previous != null && !previous.equals(tier)) {
                throw new InvalidLimitException("ratelimit.tiers." + tier + ".api-keys", "An API key is listed under "
                        + "both ratelimit.tiers." + previous + ".api-keys and ratelimit.tiers." + tier
                        + ".api-keys; a key belongs to exactly one tier.");
            }
            return this;
        }

        public Builder limit(String tier, String routeClass, TokenBucketLimit limit) {
            tier(tier);
            PolicyNames.requireValid("ratelimit.tiers." + tier + ".limits." + routeClass, routeClass);
            if (!limit.policy().equals(policyName(tier, routeClass))) {
                throw new IllegalArgumentException("the limit for " + tier + "/" + routeClass + " must be named "
                        + policyName(tier, routeClass) + ", not " + limit.policy());
            }
            limitsByTier.get(tier).put(routeClass, limit);
            return this;
        }

        public LimitPlan build() {
            PolicyNames.requireValid("ratelimit.default-tier", defaultTier);
            if (!limitsByTier.containsKey(defaultTier)) {
                throw new InvalidLimitException("ratelimit.default-tier", "ratelimit.default-tier is '" + defaultTier
                        + "', but no such tier is configured under ratelimit.tiers (configured: "
                        + limitsByTier.keySet() + "). Unknown API keys would have no limit.");
            }
            return new LimitPlan(this);
        }
    }
}

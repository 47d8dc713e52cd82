package dev.ratelimiter.autoconfigure;

import java.util.Map;

import dev.ratelimiter.core.LimitPlan;
import dev.ratelimiter.core.TokenBucketLimit;

/**
 * Turns bound properties into the core's immutable, validated {@link LimitPlan}. Every refusal names the
 * property at fault.
 */
final class LimitPlanFactory {

    private LimitPlanFactory() {
    }

    static LimitPlan create(RateLimitProperties properties) {
        LimitPlan.Builder plan = LimitPlan.builder(properties.getDefaultTier());
        if (properties.getTiers().isEmpty()) {
            // Nothing configured yet: a plan without limits, so the starter can be added before limits are written.
            return plan.tier(properties.getDefaultTier()).build();
        }
        properties.getTiers().forEach((tier, settings) -> {
            plan.tier(tier);
            settings.getApiKeys().forEach(apiKey -> plan.apiKey(apiKey, tier));
            for (Map.Entry<String, RateLimitProperties.Limit> entry : settings.getLimits().entrySet()) {
                plan.limit(tier, entry.getKey(), limit(tier, entry.getKey(), entry.getValue()));
            }
        });
        return plan.build();
    }

    private static TokenBucketLimit limit(String tier, String routeClass, RateLimitProperties.Limit settings) {
        String source = "ratelimit.tiers." + tier + ".limits." + routeClass;
        // algorithm has one value so far; an unknown name is refused by the binder, which lists the valid ones.
        return TokenBucketLimit.builder(LimitPlan.policyName(tier, routeClass))
                .source(source)
                .capacity(settings.getCapacity())
                .refill(settings.getRefillTokens(), settings.getRefillPeriod())
                .build();
    }
}

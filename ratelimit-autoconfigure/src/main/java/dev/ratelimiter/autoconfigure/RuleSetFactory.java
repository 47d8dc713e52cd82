package dev.ratelimiter.autoconfigure;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.PolicyNames;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuntimeRules;
import dev.ratelimiter.core.UnknownApiKeyPolicy;

/**
 * Builds the rule set in force from the configured rules plus the runtime rules, in that order: a runtime rule
 * with the id of a configured one replaces it, and runtime switches override configured ones.
 */
final class RuleSetFactory {

    private final RateLimitProperties properties;

    RuleSetFactory(RateLimitProperties properties) {
        this.properties = properties;
    }

    /** The configured rules alone; refuses an invalid configuration with a message naming the setting. */
    RuleSet configured() {
        return create(RuntimeRules.EMPTY);
    }

    RuleSet create(RuntimeRules runtime) {
        RuleSet.Builder rules = RuleSet.builder(properties.getDefaultTier())
                .version(runtime.version())
                .killSwitch(properties.isKillSwitch());
        Set<String> knownTiers = new HashSet<>(properties.getTiers().keySet());
        properties.getTiers().forEach((tier, settings) -> {
            settings.getApiKeys().forEach(apiKey -> rules.apiKey(apiKey, tier));
            rules.enforce(tier, settings.isEnforce());
            settings.getLimits().forEach((routeClass, limit) -> rules.rule(RuleFactory.tierDefault(tier, routeClass, limit)));
        });
        Map<String, RuleProperties> defined = new LinkedHashMap<>(properties.getRules());
        runtime.specs().forEach((id, spec) -> {
            defined.remove(id); // a replaced rule takes the runtime rule's place in the order (ties: first defined)
            defined.put(id, RuleFactory.bind(id, spec));
        });
        defined.forEach((id, settings) -> {
            boolean runtimeSwitchOff = !settings.isEnabled() && runtime.specs().containsKey(id);
            if (runtimeSwitchOff) {
                rules.without(id); // {enabled=false} alone switches a rule (or a tier default) off everywhere
                return;
            }
            // a configured rule is validated even when switched off, so that switching it on cannot fail
            Rule rule = RuleFactory.create(id, settings, "ratelimit.rules." + id + ".");
            if (settings.isEnabled()) {
                rules.rule(rule);
            }
        });
        RateLimitProperties.Unknown unknown = properties.getApiKey().getUnknown();
        rules.unknownApiKeys(unknown.getPolicy(), unknown.getPolicy() == UnknownApiKeyPolicy.PER_ADDRESS
                ? RuleFactory.unknownKeys(unknown.getLimit()) : null);
        applyControl(runtime.control(), rules);
        RuleSet built = rules.build();
        built.rules().values().forEach(rule -> knownTiers.addAll(rule.match().tiers()));
        if (!knownTiers.isEmpty() && !knownTiers.contains(properties.getDefaultTier())) {
            throw new InvalidLimitException("ratelimit.default-tier", "ratelimit.default-tier is '"
                    + properties.getDefaultTier() + "', but no tier of that name is configured (configured: "
                    + new TreeSet<>(knownTiers) + "). Unknown API keys would match no tier's rules.");
        }
        return built;
    }

    private static void applyControl(Map<String, String> control, RuleSet.Builder rules) {
        control.forEach((name, value) -> {
            if (RuntimeRules.KILL_SWITCH.equals(name)) {
                rules.killSwitch(Boolean.parseBoolean(value));
            }
            else if (name.startsWith("tier.") && name.endsWith(".enforce") && name.length() > 13
                    && PolicyNames.isValid(name.substring(5, name.length() - 8))) {
                // A switch with a name no write could have made (written by hand) is skipped, never fatal: switches
                // must apply whatever else the store holds.
                rules.enforce(name.substring(5, name.length() - 8), Boolean.parseBoolean(value));
            }
        });
    }

    /** Whether a rule id is defined in configuration (and so cannot be deleted at runtime, only replaced). */
    boolean isConfigured(String ruleId) {
        return properties.getRules().containsKey(ruleId) || isTierDefault(ruleId);
    }

    private boolean isTierDefault(String ruleId) {
        for (Map.Entry<String, RateLimitProperties.Tier> tier : properties.getTiers().entrySet()) {
            for (String routeClass : tier.getValue().getLimits().keySet()) {
                if ((tier.getKey() + "." + routeClass).equals(ruleId)) {
                    return true;
                }
            }
        }
        return false;
    }
}

package dev.ratelimiter.autoconfigure;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.PolicyNames;
import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSetBuilder;
import dev.ratelimiter.core.RuntimeRules;
import dev.ratelimiter.core.UnknownApiKeyPolicy;

/**
 * Builds the rule set in force from the configured rules plus the runtime rules, in that order: a runtime rule
 * with the id of a configured one replaces it, and runtime switches override configured ones.
 */
final class RuleSetFactory {

    private final RateLimitProperties properties;
    private final ClientIdKeyring keyring;
    private final RegionShares regions;

    /** A factory matching API keys by the unkeyed hash, as without a configured secret. */
    RuleSetFactory(RateLimitProperties properties) {
        this(properties, ClientIdKeyring.unkeyed());
    }

    RuleSetFactory(RateLimitProperties properties, ClientIdKeyring keyring) {
        this(properties, keyring, null);
    }

    /** @param regions the regions global rules are split between, or null */
    RuleSetFactory(RateLimitProperties properties, ClientIdKeyring keyring, RegionShares regions) {
        this.properties = properties;
        this.keyring = keyring;
        this.regions = regions;
    }

    /** The hashes API keys are matched by. */
    ClientIdKeyring keyring() {
        return keyring;
    }

    /** The configured rules alone; refuses an invalid configuration with a message naming the setting. */
    RuleSet configured() {
        RuleSet configured = create(RuntimeRules.EMPTY);
        configured.unmatchedApiKeys().forEach((id, count) -> {
            // Deployed together with the secret, so refused at start-up rather than reported like a stored rule.
            String setting = "ratelimit.rules." + id + ".match.api-keys";
            throw new InvalidLimitException(setting, setting + " has " + count + " key(s) hashed under a secret this "
                    + "instance does not have; they would match nobody. List the keys as sent, or set that secret as "
                    + "ratelimit.client-id.previous-secret.");
        });
        return configured;
    }

    RuleSet create(RuntimeRules runtime) {
        RuleSetBuilder rules = RuleSet.builder(properties.getDefaultTier())
                .clientIds(keyring)
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
        ApiKeyProperties.Unknown unknown = properties.getApiKey().getUnknown();
        rules.unknownApiKeys(unknown.getPolicy(), unknown.getPolicy() == UnknownApiKeyPolicy.PER_ADDRESS
                ? RuleFactory.unknownKeys(unknown.getLimit()) : null);
        applyControl(runtime.control(), rules);
        RuleSet built = rules.build();
        built.rules().values().forEach(rule -> knownTiers.addAll(rule.match().tiers()));
        if (regions != null) {
            built.rules().values().forEach(regions::requireSplittable);
        }
        if (!knownTiers.isEmpty() && !knownTiers.contains(properties.getDefaultTier())) {
            throw new InvalidLimitException("ratelimit.default-tier", "ratelimit.default-tier is '"
                    + properties.getDefaultTier() + "', but no tier of that name is configured (configured: "
                    + new TreeSet<>(knownTiers) + "). Unknown API keys would match no tier's rules.");
        }
        return built;
    }

    private static void applyControl(Map<String, String> control, RuleSetBuilder rules) {
        control.forEach((name, value) -> {
            if (RuntimeRules.KILL_SWITCH.equals(name)) {
                rules.killSwitch(Boolean.parseBoolean(value));
            }
            else {
                String tier = RuntimeRules.tierOfEnforceKey(name);
                // A switch with a name no write could have made (written by hand) is skipped, never fatal: switches
                // must apply whatever else the store holds.
                if (tier != null && PolicyNames.isValid(tier)) {
                    rules.enforce(tier, Boolean.parseBoolean(value));
                }
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

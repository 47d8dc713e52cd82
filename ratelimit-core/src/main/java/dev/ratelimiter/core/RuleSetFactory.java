package dev.ratelimiter.core;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Builds the rule set in force from the configured rules plus the runtime rules, in that order: a runtime rule
 * with the id of a configured one replaces it, and runtime switches override configured ones.
 */
public final class RuleSetFactory {

    private final RuleDefinitions definitions;
    private final RegionShares regions;

    public RuleSetFactory(RuleDefinitions definitions) {
        this(definitions, null);
    }

    /** @param regions the regions global rules are split between, or null */
    public RuleSetFactory(RuleDefinitions definitions, RegionShares regions) {
        this.definitions = definitions;
        this.regions = regions;
    }

    /** The configured rules and switches this factory starts from. */
    public RuleDefinitions definitions() {
        return definitions;
    }

    /** The configured rules alone; refuses an invalid configuration with a message naming the setting. */
    public RuleSet configured() {
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

    public RuleSet create(RuntimeRules runtime) {
        String defaultTier = definitions.defaultTier();
        RuleSetBuilder rules = RuleSet.builder(defaultTier)
                .clientIds(definitions.keyring())
                .version(runtime.version())
                .killSwitch(definitions.killSwitch());
        Set<String> knownTiers = new HashSet<>();
        for (RuleDefinitions.Tier tier : definitions.tiers()) {
            knownTiers.add(tier.name());
            tier.apiKeys().forEach(apiKey -> rules.apiKey(apiKey, tier.name()));
            rules.enforce(tier.name(), tier.enforce());
            tier.defaultRules().values().forEach(rule -> rules.rule(rule.get()));
        }
        Map<String, RuleDefinitions.Definition> defined = new LinkedHashMap<>(definitions.rules());
        runtime.specs().forEach((id, spec) -> {
            defined.remove(id); // a replaced rule takes the runtime rule's place in the order (ties: first defined)
            defined.put(id, definitions.runtimeRule(id, spec));
        });
        defined.forEach((id, definition) -> {
            boolean runtimeSwitchOff = !definition.enabled() && runtime.specs().containsKey(id);
            if (runtimeSwitchOff) {
                rules.without(id); // {enabled=false} alone switches a rule (or a tier default) off everywhere
                return;
            }
            // a configured rule is validated even when switched off, so that switching it on cannot fail
            Rule rule = definition.rule().get();
            if (definition.enabled()) {
                rules.rule(rule);
            }
        });
        UnknownApiKeyPolicy unknown = definitions.unknownApiKeys();
        rules.unknownApiKeys(unknown, unknown == UnknownApiKeyPolicy.PER_ADDRESS
                ? definitions.unknownApiKeyRule() : null);
        applyControl(runtime.control(), rules);
        RuleSet built = rules.build();
        built.rules().values().forEach(rule -> knownTiers.addAll(rule.match().tiers()));
        // the per-address bucket's tier is reserved, not configured: alone, it names no tier the default must be
        knownTiers.remove(RuleSet.UNKNOWN_KEYS);
        if (regions != null) {
            built.rules().values().forEach(regions::requireSplittable);
        }
        if (!knownTiers.isEmpty() && !knownTiers.contains(defaultTier)) {
            throw new InvalidLimitException("ratelimit.default-tier", "ratelimit.default-tier is '" + defaultTier
                    + "', but no tier of that name is configured (configured: " + new TreeSet<>(knownTiers)
                    + "). Unknown API keys would match no tier's rules.");
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
    public boolean isConfigured(String ruleId) {
        if (definitions.rules().containsKey(ruleId)) {
            return true;
        }
        for (RuleDefinitions.Tier tier : definitions.tiers()) {
            if (tier.defaultRules().containsKey(ruleId)) {
                return true;
            }
        }
        return false;
    }
}

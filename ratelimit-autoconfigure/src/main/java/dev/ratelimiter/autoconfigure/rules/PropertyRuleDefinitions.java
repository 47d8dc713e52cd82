package dev.ratelimiter.autoconfigure.rules;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.autoconfigure.RuleProperties;
import dev.ratelimiter.autoconfigure.security.ServerForwarding;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleDefinitions;
import dev.ratelimiter.core.RuntimeRules;
import dev.ratelimiter.core.UnknownApiKeyPolicy;

/**
 * The configured rules and switches as {@code ratelimit.*} binds them, for the core's rule lifecycle. Read afresh on
 * every call, and every spec bound by Spring's {@code Binder} ({@link RuleFactory}), so that {@code application.yml}
 * and the operator's specs accept and refuse the same things.
 */
public final class PropertyRuleDefinitions implements RuleDefinitions {

    private final RateLimitProperties properties;
    private final ClientIdKeyring keyring;
    private final ServerForwarding forwarding;

    /** Definitions matching API keys by the unkeyed hash, as without a configured secret. */
    public PropertyRuleDefinitions(RateLimitProperties properties) {
        this(properties, ClientIdKeyring.unkeyed());
    }

    /** Definitions for a server that reports the connecting peer as it is. */
    public PropertyRuleDefinitions(RateLimitProperties properties, ClientIdKeyring keyring) {
        this(properties, keyring, ServerForwarding.NONE);
    }

    /** @param forwarding refuses runtime rules keyed by an address the server took from a client's header */
    public PropertyRuleDefinitions(RateLimitProperties properties, ClientIdKeyring keyring,
            ServerForwarding forwarding) {
        this.properties = properties;
        this.keyring = keyring;
        this.forwarding = forwarding;
    }

    @Override
    public String defaultTier() {
        return properties.getDefaultTier();
    }

    @Override
    public boolean killSwitch() {
        return properties.isKillSwitch();
    }

    @Override
    public List<Tier> tiers() {
        List<Tier> tiers = new ArrayList<>();
        properties.getTiers().forEach((tier, settings) -> {
            Map<String, Supplier<Rule>> defaults = new LinkedHashMap<>();
            settings.getLimits().forEach((routeClass, limit) -> defaults.put(RuleFactory.tierDefaultId(tier,
                    routeClass), () -> RuleFactory.tierDefault(tier, routeClass, limit)));
            tiers.add(new Tier(tier, settings.getApiKeys(), settings.isEnforce(), defaults));
        });
        return tiers;
    }

    @Override
    public Map<String, Definition> rules() {
        Map<String, Definition> rules = new LinkedHashMap<>();
        properties.getRules().forEach((id, settings) -> rules.put(id, definition(id, settings)));
        return rules;
    }

    @Override
    public Definition runtimeRule(String id, Map<String, String> spec) {
        RuleProperties settings = RuleFactory.bind(id, spec);
        // Every runtime rule passes here: one being written (validated with the store's rules before it is stored,
        // so the operator is told invalid_rule) and one the store already holds (written before the upgrade, or by an
        // instance whose server reports the peer as it is), which then stays out of force, named by the rule sync.
        forwarding.requireReliable(id, settings.getKey());
        return definition(id, settings);
    }

    private static Definition definition(String id, RuleProperties settings) {
        return new Definition(settings.isEnabled(), () -> RuleFactory.create(id, settings,
                "ratelimit.rules." + id + "."));
    }

    @Override
    public UnknownApiKeyPolicy unknownApiKeys() {
        return properties.getApiKey().getUnknown().getPolicy();
    }

    @Override
    public Rule unknownApiKeyRule() {
        return RuleFactory.unknownKeys(properties.getApiKey().getUnknown().getLimit());
    }

    @Override
    public Map<String, String> specToStore(String id, Map<String, String> sent) {
        // strictly: a name that binds to no setting is refused here, before anything is written
        RuleFactory.bindStrictly(id, sent);
        return StoredApiKeys.hashed(id, sent, keyring);
    }

    @Override
    public Map<String, String> apiKeyNotes(RuntimeRules runtime) {
        return StoredApiKeys.notes(runtime, keyring);
    }

    @Override
    public ClientIdKeyring keyring() {
        return keyring;
    }
}

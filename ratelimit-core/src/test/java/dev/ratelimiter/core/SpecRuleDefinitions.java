package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Rule definitions for the core's tests, without Spring: tiers and rules given in code, and specs of a few settings
 * (a token bucket per API key: {@code capacity}, {@code refill-tokens}, {@code refill-period}, {@code group},
 * {@code mode}, {@code enabled}, {@code match.api-keys} (a list or {@code [i]} elements)). Any other name is refused,
 * as a strict binding would; the Spring glue's own definitions are tested with the Binder.
 */
final class SpecRuleDefinitions implements RuleDefinitions {

    private final String defaultTier;
    private boolean killSwitch;
    private final List<Tier> tiers = new ArrayList<>();
    private final Map<String, Definition> rules = new LinkedHashMap<>();

    SpecRuleDefinitions(String defaultTier) {
        this.defaultTier = defaultTier;
    }

    /** A tier whose default rule ({@code <tier>.default}) gives each API key {@code capacity} requests an hour. */
    SpecRuleDefinitions tier(String name, long capacity, String... apiKeys) {
        Map<String, Supplier<Rule>> defaults = Map.of(name + ".default", () -> new Rule(name + ".default",
                "tier-default", new Match(Set.of(), List.of(), Set.of(), Set.of(name), Set.of()),
                List.of(Dimension.API_KEY), TokenBucketLimit.of("ratelimit.tiers." + name + ".limits.default.",
                        capacity, capacity, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL));
        tiers.add(new Tier(name, List.of(apiKeys), true, defaults));
        return this;
    }

    /** A configured rule, from a spec as a runtime rule's. */
    SpecRuleDefinitions rule(String id, Map<String, String> spec) {
        rules.put(id, runtimeRule(id, spec));
        return this;
    }

    SpecRuleDefinitions killSwitch(boolean on) {
        this.killSwitch = on;
        return this;
    }

    @Override
    public String defaultTier() {
        return defaultTier;
    }

    @Override
    public boolean killSwitch() {
        return killSwitch;
    }

    @Override
    public List<Tier> tiers() {
        return tiers;
    }

    @Override
    public Map<String, Definition> rules() {
        return rules;
    }

    @Override
    public Definition runtimeRule(String id, Map<String, String> spec) {
        String source = "ratelimit.rules." + id + ".";
        Map<String, String> settings = new LinkedHashMap<>(spec);
        Set<String> apiKeys = new LinkedHashSet<>();
        settings.keySet().removeIf(name -> {
            if (name.equals("match.api-keys") || name.startsWith("match.api-keys[")) {
                apiKeys.addAll(List.of(spec.get(name).split(",")));
                return true;
            }
            return false;
        });
        for (String name : settings.keySet()) {
            if (!Set.of("capacity", "refill-tokens", "refill-period", "group", "mode", "enabled").contains(name)) {
                throw new InvalidLimitException(source + name, source + name + " is not a rule setting");
            }
        }
        long capacity = number(source + "capacity", settings.getOrDefault("capacity", "0"));
        long refill = number(source + "refill-tokens", settings.getOrDefault("refill-tokens", "" + capacity));
        Duration period = duration(settings.getOrDefault("refill-period", "1s"));
        Mode mode = Mode.valueOf(settings.getOrDefault("mode", "enforce").toUpperCase());
        String group = settings.getOrDefault("group", id);
        return new Definition(Boolean.parseBoolean(settings.getOrDefault("enabled", "true")), () -> new Rule(id, group,
                new Match(Set.of(), List.of(), Set.of(), Set.of(), apiKeys), List.of(Dimension.API_KEY),
                TokenBucketLimit.of(source, capacity, refill, period), 0, mode, FailureMode.LOCAL));
    }

    private static long number(String setting, String value) {
        try {
            return Long.parseLong(value);
        }
        catch (NumberFormatException ex) {
            throw new InvalidLimitException(setting, setting + " is not a number: " + value);
        }
    }

    private static Duration duration(String value) {
        return Duration.parse("PT" + value.toUpperCase());
    }

    @Override
    public UnknownApiKeyPolicy unknownApiKeys() {
        return UnknownApiKeyPolicy.DEFAULT_TIER;
    }

    @Override
    public Rule unknownApiKeyRule() {
        throw new UnsupportedOperationException("no unknown-key bucket under the default-tier policy");
    }

    @Override
    public Map<String, String> specToStore(String id, Map<String, String> sent) {
        runtimeRule(id, sent);
        return sent;
    }

    @Override
    public Map<String, String> apiKeyNotes(RuntimeRules runtime) {
        return Map.of();
    }

    @Override
    public ClientIdKeyring keyring() {
        return ClientIdKeyring.unkeyed();
    }
}

package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every rule in force, with the switches that govern them: which API keys are in which tier, whether each tier is
 * enforced, and the global kill switch. Immutable; a change builds a new set that replaces this one atomically.
 */
public final class RuleSet {

    /**
     * The tier, rule id and group of API keys nobody listed, under {@link UnknownApiKeyPolicy#PER_ADDRESS}: reserved,
     * so that no configured tier or rule can take the name.
     */
    public static final String UNKNOWN_KEYS = "unknown-api-key";

    private final long version;
    private final String defaultTier;
    private final Map<String, String> tierByApiKey;
    private final Set<String> shadowTiers;
    private final boolean killSwitch;
    private final Map<String, Rule> rules;
    private final List<CompiledRule> general;
    private final Map<String, List<CompiledRule>> byApiKey;
    private final boolean needsClientIp;
    private final boolean needsUser;
    private final boolean needsTenant;
    private final UnknownApiKeyPolicy unknownKeys;
    private final List<Rule> unknownKeyRules;

    private RuleSet(Builder builder) {
        this.version = builder.version;
        this.defaultTier = builder.defaultTier;
        this.tierByApiKey = Map.copyOf(builder.tierByApiKey);
        this.shadowTiers = Set.copyOf(builder.shadowTiers);
        this.killSwitch = builder.killSwitch;
        this.rules = Collections.unmodifiableMap(new LinkedHashMap<>(builder.rules));
        List<CompiledRule> general = new ArrayList<>();
        Map<String, List<CompiledRule>> byApiKey = new HashMap<>();
        int order = 0;
        boolean clientIp = false;
        boolean user = false;
        boolean tenant = false;
        for (Rule rule : builder.rules.values()) {
            // shards hash the caller to one: its API key, else its user, else its address
            clientIp |= rule.key().contains(Dimension.CLIENT_IP) || rule.shards() > 1;
            user |= rule.key().contains(Dimension.USER) || rule.shards() > 1;
            tenant |= rule.key().contains(Dimension.TENANT);
            CompiledRule compiled = new CompiledRule(rule, order++);
            if (rule.match().apiKeys().isEmpty()) {
                general.add(compiled);
            }
            else {
                // Customer overrides can number in the thousands: index them so a request scans only its own.
                rule.match().apiKeys().forEach(key -> byApiKey.computeIfAbsent(key, k -> new ArrayList<>()).add(compiled));
            }
        }
        this.general = List.copyOf(general);
        this.byApiKey = Map.copyOf(byApiKey);
        this.needsClientIp = clientIp;
        this.needsUser = user;
        this.needsTenant = tenant;
        this.unknownKeys = builder.unknownKeys;
        Rule unknownKeyRule = builder.rules.get(UNKNOWN_KEYS);
        this.unknownKeyRules = unknownKeyRule == null ? List.of() : List.of(unknownKeyRule);
    }

    public static Builder builder(String defaultTier) {
        return new Builder(defaultTier);
    }

    public long version() {
        return version;
    }

    public String defaultTier() {
        return defaultTier;
    }

    public String tierOf(String apiKey) {
        return apiKey == null ? defaultTier : tierByApiKey.getOrDefault(apiKey, defaultTier);
    }

    public boolean killSwitch() {
        return killSwitch;
    }

    /** What happens to API keys that {@linkplain #knows no tier or override lists}. */
    public UnknownApiKeyPolicy unknownApiKeys() {
        return unknownKeys;
    }

    /** Whether a tier lists this API key, or a rule (a customer override) matches it by name. */
    public boolean knows(String apiKey) {
        return tierByApiKey.containsKey(apiKey) || byApiKey.containsKey(apiKey);
    }

    /** Whether a tier lists any API key, or any override names one: if not, under a policy, every key is unknown. */
    public boolean listsAnyApiKey() {
        return !tierByApiKey.isEmpty() || !byApiKey.isEmpty();
    }

    /** Whether denials of this tier's clients are enforced (false: every rule acts as in shadow for them). */
    public boolean enforced(String tier) {
        return !shadowTiers.contains(tier);
    }

    public Set<String> shadowTiers() {
        return shadowTiers;
    }

    public Map<String, Rule> rules() {
        return rules;
    }

    /**
     * Whether any rule reads the client's address (a client-ip key, or shards, which hash the caller to one): only
     * then is it worth reading the peer and the forwarding headers.
     */
    public boolean needsClientIp() {
        return needsClientIp;
    }

    /** Whether any rule reads the user (a user key, or shards). */
    public boolean needsUser() {
        return needsUser;
    }

    /** Whether any rule reads the tenant. */
    public boolean needsTenant() {
        return needsTenant;
    }

    /**
     * The rules that apply to a request: in each group the most specific matching rule (ties go to the rule
     * defined first); a rule that {@linkplain WhenMissing#SKIP skips} requests lacking one of its key's values only
     * when the request has them all.
     */
    public List<Rule> applicableTo(RequestAttributes request) {
        if (UNKNOWN_KEYS.equals(request.tier())) {
            return unknownKeyRules; // an unknown key gets the per-address bucket and nothing that is kept per key
        }
        Map<String, CompiledRule> bestByGroup = new LinkedHashMap<>();
        consider(request, general, bestByGroup);
        if (request.apiKey() != null) {
            consider(request, byApiKey.getOrDefault(request.apiKey(), List.of()), bestByGroup);
        }
        List<Rule> applicable = new ArrayList<>(bestByGroup.size());
        for (CompiledRule compiled : bestByGroup.values()) {
            applicable.add(compiled.rule);
        }
        return applicable;
    }

    private static void consider(RequestAttributes request, List<CompiledRule> candidates,
            Map<String, CompiledRule> bestByGroup) {
        for (CompiledRule candidate : candidates) {
            if (!candidate.matches(request)) {
                continue;
            }
            bestByGroup.merge(candidate.rule.group(), candidate,
                    (current, challenger) -> challenger.specificity > current.specificity
                            || (challenger.specificity == current.specificity && challenger.order < current.order)
                                    ? challenger : current);
        }
    }

    /** A rule with its path globs compiled once. */
    private static final class CompiledRule {

        private final Rule rule;
        private final List<PathPattern> paths;
        private final int specificity;
        private final int order;

        CompiledRule(Rule rule, int order) {
            this.rule = rule;
            this.paths = rule.match().paths().stream().map(PathPattern::new).toList();
            this.specificity = rule.match().specificity();
            this.order = order;
        }

        boolean matches(RequestAttributes request) {
            if (!rule.match().matches(request, paths)) {
                return false;
            }
            if (rule.whenMissing() != WhenMissing.SKIP) {
                return true; // a missing value is the evaluator's to handle: a shared bucket, or a refusal
            }
            for (Dimension dimension : rule.key()) {
                if (dimension.valueOf(request) == null) {
                    return false;
                }
            }
            return true;
        }
    }

    /** Collects rules and switches and refuses a set that contradicts itself. */
    public static final class Builder {

        private long version;
        private final String defaultTier;
        private final Map<String, String> tierByApiKey = new HashMap<>();
        private final Set<String> shadowTiers = new HashSet<>();
        private boolean killSwitch;
        private final Map<String, Rule> rules = new LinkedHashMap<>();
        private UnknownApiKeyPolicy unknownKeys = UnknownApiKeyPolicy.DEFAULT_TIER;

        private Builder(String defaultTier) {
            this.defaultTier = PolicyNames.requireValid("ratelimit.default-tier", defaultTier);
        }

        public Builder version(long version) {
            this.version = version;
            return this;
        }

        public Builder killSwitch(boolean on) {
            this.killSwitch = on;
            return this;
        }

        public Builder enforce(String tier, boolean enforce) {
            PolicyNames.requireValid("ratelimit.tiers." + tier, tier);
            if (enforce) {
                shadowTiers.remove(tier);
            }
            else {
                shadowTiers.add(tier);
            }
            return this;
        }

        public Builder apiKey(String apiKey, String tier) {
            PolicyNames.requireValid("ratelimit.tiers." + tier, tier);
            requireNotReserved("ratelimit.tiers." + tier, tier);
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

        /**
         * What happens to API keys nobody listed; under {@link UnknownApiKeyPolicy#PER_ADDRESS}, {@code perAddress}
         * is their bucket: a rule of id, group and tier {@link #UNKNOWN_KEYS} keyed by client address.
         */
        public Builder unknownApiKeys(UnknownApiKeyPolicy policy, Rule perAddress) {
            if (policy == UnknownApiKeyPolicy.PER_ADDRESS && (perAddress == null
                    || !UNKNOWN_KEYS.equals(perAddress.id()) || !perAddress.key().equals(List.of(Dimension.CLIENT_IP)))) {
                throw new IllegalArgumentException("the per-address policy needs its rule '" + UNKNOWN_KEYS
                        + "' keyed by client address, got " + perAddress);
            }
            this.unknownKeys = policy;
            rules.remove(UNKNOWN_KEYS);
            if (policy == UnknownApiKeyPolicy.PER_ADDRESS) {
                rules.put(UNKNOWN_KEYS, perAddress);
            }
            return this;
        }

        /** Adds a rule, replacing one with the same id (runtime rules replace configured ones this way). */
        public Builder rule(Rule rule) {
            requireNotReserved("ratelimit.rules." + rule.id(), rule.id());
            rule.match().tiers().forEach(tier -> requireNotReserved("ratelimit.rules." + rule.id() + ".match.tiers",
                    tier));
            rules.remove(rule.id());
            rules.put(rule.id(), rule);
            return this;
        }

        /** Drops the rule of that id, if any. */
        public Builder without(String id) {
            rules.remove(id);
            return this;
        }

        private static void requireNotReserved(String setting, String name) {
            if (UNKNOWN_KEYS.equals(name)) {
                throw new InvalidLimitException(setting, "'" + UNKNOWN_KEYS + "' is reserved for the bucket of API "
                        + "keys nobody listed (ratelimit.api-key.unknown); choose another name.");
            }
        }

        public RuleSet build() {
            Map<List<Object>, Rule> sameMatch = new HashMap<>();
            for (Rule rule : rules.values()) {
                Rule twin = sameMatch.putIfAbsent(List.of(rule.group(), rule.match()), rule);
                if (twin != null) {
                    throw new InvalidLimitException("ratelimit.rules." + rule.id() + ".match", "Rules '" + twin.id()
                            + "' and '" + rule.id() + "' are in the same group '" + rule.group() + "' and match the "
                            + "same requests, so one of them could never apply. Give one a narrower match or "
                            + "another group.");
                }
            }
            return new RuleSet(this);
        }
    }
}

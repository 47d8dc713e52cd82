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
    private final ClientIdIndex<String> tierByApiKey;
    private final Set<String> shadowTiers;
    private final boolean killSwitch;
    private final Map<String, Rule> rules;
    private final List<CompiledRule> general;
    private final ClientIdIndex<CompiledRule> byApiKey;
    private final Map<String, Integer> unmatchedApiKeys;
    private final boolean needsClientIp;
    private final boolean needsUser;
    private final boolean needsTenant;
    private final UnknownApiKeyPolicy unknownKeys;
    private final List<CompiledRule> unknownKeyRules;

    private RuleSet(Builder builder) {
        this.version = builder.version;
        this.defaultTier = builder.defaultTier;
        this.tierByApiKey = builder.tiersByApiKey();
        this.shadowTiers = Set.copyOf(builder.shadowTiers);
        this.killSwitch = builder.killSwitch;
        this.rules = Collections.unmodifiableMap(new LinkedHashMap<>(builder.rules));
        List<CompiledRule> general = new ArrayList<>();
        ClientIdIndex.Builder<CompiledRule> byApiKey = ClientIdIndex.builder(builder.keyring);
        Map<String, Integer> unmatched = new LinkedHashMap<>();
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
                for (String apiKey : rule.match().apiKeys()) {
                    if (!byApiKey.add(builder.keyring.hashed(apiKey), compiled)) {
                        unmatched.merge(rule.id(), 1, Integer::sum);
                    }
                }
            }
        }
        this.general = List.copyOf(general);
        this.byApiKey = byApiKey.build();
        this.unmatchedApiKeys = Collections.unmodifiableMap(unmatched);
        this.needsClientIp = clientIp;
        this.needsUser = user;
        this.needsTenant = tenant;
        this.unknownKeys = builder.unknownKeys;
        // An unknown key is limited by its address's bucket and by every rule that keeps no state per key and is no
        // tier's (per address, per route, per user, concurrency caps): a made-up key must never get more than no key.
        List<CompiledRule> forUnknown = new ArrayList<>();
        for (CompiledRule compiled : general) {
            Rule rule = compiled.rule;
            if (rule.id().equals(UNKNOWN_KEYS)
                    || !rule.key().contains(Dimension.API_KEY) && rule.match().tiers().isEmpty()) {
                forUnknown.add(compiled);
            }
        }
        this.unknownKeyRules = List.copyOf(forUnknown);
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
        if (apiKey == null) {
            return defaultTier;
        }
        List<String> tiers = tierByApiKey.get(apiKey);
        return tiers.isEmpty() ? defaultTier : tiers.get(0);
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
        return !tierByApiKey.get(apiKey).isEmpty() || !byApiKey.get(apiKey).isEmpty();
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
     * Rules with API keys hashed under a secret this instance does not have (a rotated-away secret no longer given as
     * the previous one), and how many: those keys match no request. Rule id to count; empty when all is well.
     */
    public Map<String, Integer> unmatchedApiKeys() {
        return unmatchedApiKeys;
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
        Map<String, CompiledRule> bestByGroup = new LinkedHashMap<>();
        if (UNKNOWN_KEYS.equals(request.tier())) {
            // the per-address bucket and the rules that keep no state per key; never an override's
            consider(request, unknownKeyRules, bestByGroup);
            return rulesOf(bestByGroup);
        }
        consider(request, general, bestByGroup);
        if (request.apiKey() != null) {
            consider(request, byApiKey.get(request.apiKey()), bestByGroup);
        }
        return rulesOf(bestByGroup);
    }

    private static List<Rule> rulesOf(Map<String, CompiledRule> bestByGroup) {
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
            if (!rule.match().matchesApartFromApiKeys(request, paths)) {
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
        private ClientIdKeyring keyring = ClientIdKeyring.unkeyed();
        /** Tier API keys as configured: raw or hashed, so they are resolved at build time, under the keyring. */
        private final Map<String, List<String>> tierApiKeys = new LinkedHashMap<>();
        private final Set<String> shadowTiers = new HashSet<>();
        private boolean killSwitch;
        private final Map<String, Rule> rules = new LinkedHashMap<>();
        private UnknownApiKeyPolicy unknownKeys = UnknownApiKeyPolicy.DEFAULT_TIER;

        private Builder(String defaultTier) {
            this.defaultTier = PolicyNames.requireValid("ratelimit.default-tier", defaultTier);
            requireNotReserved("ratelimit.default-tier", defaultTier);
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

        /** The client-id hashes API keys are matched by (default: unkeyed, as without a configured secret). */
        public Builder clientIds(ClientIdKeyring keyring) {
            this.keyring = keyring;
            return this;
        }

        /** Puts an API key (as sent, or {@linkplain HashedApiKey hashed}) in a tier. */
        public Builder apiKey(String apiKey, String tier) {
            String setting = "ratelimit.tiers." + tier + ".api-keys";
            PolicyNames.requireValid("ratelimit.tiers." + tier, tier);
            requireNotReserved("ratelimit.tiers." + tier, tier);
            if (apiKey == null || apiKey.isBlank()) {
                throw new InvalidLimitException(setting, setting + " contains an empty API key.");
            }
            tierApiKeys.computeIfAbsent(tier, t -> new ArrayList<>()).add(apiKey);
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

        /**
         * Tier lists come from configuration only, so a key there that cannot match is refused (at start-up) rather
         * than reported: the secret and the list are deployed together.
         */
        private ClientIdIndex<String> tiersByApiKey() {
            ClientIdIndex.Builder<String> index = ClientIdIndex.builder(keyring);
            Map<HashedApiKey, String> tierOfKey = new HashMap<>();
            tierApiKeys.forEach((tier, apiKeys) -> {
                String setting = "ratelimit.tiers." + tier + ".api-keys";
                for (String apiKey : apiKeys) {
                    HashedApiKey hashed = keyring.hashed(apiKey);
                    if (hashed == null) {
                        throw new InvalidLimitException(setting, setting + " has a value that starts like a hashed "
                                + "API key but is not one; expected " + HashedApiKey.EXPECTED_FORM + ".");
                    }
                    String previous = tierOfKey.putIfAbsent(hashed, tier);
                    if (previous != null && !previous.equals(tier)) {
                        throw new InvalidLimitException(setting, "An API key is listed under both ratelimit.tiers."
                                + previous + ".api-keys and " + setting + "; a key belongs to exactly one tier.");
                    }
                    if (previous == null && !index.add(hashed, tier)) {
                        throw new InvalidLimitException(setting, setting + " has a key hashed under a secret this "
                                + "instance does not have (" + hashed.scheme() + "); it would match nobody. List the "
                                + "key as sent, or set that secret as ratelimit.client-id.previous-secret.");
                    }
                }
            });
            return index.build();
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
                // A key listed as sent in one rule and hashed in another is the same customer.
                Set<HashedApiKey> apiKeys = new HashSet<>();
                rule.match().apiKeys().forEach(apiKey -> apiKeys.add(keyring.hashed(apiKey)));
                Match match = rule.match();
                Rule twin = sameMatch.putIfAbsent(List.of(rule.group(), match.routeIds(), match.paths(),
                        match.routeClasses(), match.tiers(), apiKeys), rule);
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

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
    private final Set<String> knownTiers;
    private final boolean killSwitch;
    private final Map<String, Rule> rules;
    private final List<CompiledRule> general;
    private final ClientIdIndex<CompiledRule> byApiKey;
    private final Map<String, Integer> unmatchedApiKeys;
    private final boolean needsClientIp;
    private final boolean needsUser;
    private final boolean needsTenant;
    private final boolean matchesPaths;
    private final UnknownApiKeyPolicy unknownKeys;
    private final List<CompiledRule> unknownKeyRules;

    RuleSet(RuleSetBuilder builder) {
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
        boolean paths = false;
        Set<String> knownTiers = new HashSet<>(builder.knownTiers);
        for (Rule rule : builder.rules.values()) {
            knownTiers.addAll(rule.match().tiers());
            // shards hash the caller to one: its API key, else its user, else its address
            clientIp |= rule.key().contains(Dimension.CLIENT_IP) || rule.shards() > 1;
            user |= rule.key().contains(Dimension.USER) || rule.shards() > 1;
            tenant |= rule.key().contains(Dimension.TENANT);
            paths |= !rule.match().paths().isEmpty();
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
        knownTiers.remove(UNKNOWN_KEYS);
        this.knownTiers = Set.copyOf(knownTiers);
        this.general = List.copyOf(general);
        this.byApiKey = byApiKey.build();
        this.unmatchedApiKeys = Collections.unmodifiableMap(unmatched);
        this.needsClientIp = clientIp;
        this.needsUser = user;
        this.needsTenant = tenant;
        this.matchesPaths = paths;
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

    public static RuleSetBuilder builder(String defaultTier) {
        return new RuleSetBuilder(defaultTier);
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

    /**
     * The tier a request with this API key (or none) is limited as: the tier that lists it, else the default tier;
     * or, when {@linkplain #unknownApiKeys() unknown keys} have a policy of their own, {@link #UNKNOWN_KEYS} for a key
     * no tier or override {@linkplain #knows knows} (under {@link UnknownApiKeyPolicy#REJECT} the caller refuses it).
     * Under the kill switch every key is its tier's, since everything passes anyway.
     */
    public String tierFor(String apiKey) {
        if (apiKey != null && unknownKeys != UnknownApiKeyPolicy.DEFAULT_TIER && !killSwitch && !knows(apiKey)) {
            return UNKNOWN_KEYS;
        }
        return tierOf(apiKey);
    }

    /**
     * The tier of a caller whose tier a trusted source (a claim of a verified token, a header the authentication
     * sets) named: that tier when this rule set knows it, else, as for any caller, {@link #tierFor(String)} of its API
     * key. A caller the authentication vouched a known tier for is never an unknown key. Per-key overrides apply
     * either way: they match the API key, not the tier.
     */
    public String tierFor(String apiKey, String trustedTier) {
        return trustedTier != null && knowsTier(trustedTier) ? trustedTier : tierFor(apiKey);
    }

    /**
     * Whether a tier of this name is configured anywhere: the default tier, a tier with limits, API keys or a switch,
     * or a tier a rule matches. {@link #UNKNOWN_KEYS} never is.
     */
    public boolean knowsTier(String tier) {
        return knownTiers.contains(tier);
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

    /** Whether any rule matches requests by their path ({@code match.paths}). */
    public boolean matchesPaths() {
        return matchesPaths;
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

    /**
     * {@link #applicableTo(RequestAttributes)} for a client known by its client id under {@code scheme} rather than by
     * its API key (which {@code request} then lacks): the usage API's {@code client=}.
     */
    List<Rule> applicableToClient(RequestAttributes request, ClientIds scheme, String clientId) {
        Map<String, CompiledRule> bestByGroup = new LinkedHashMap<>();
        if (UNKNOWN_KEYS.equals(request.tier())) {
            consider(request, unknownKeyRules, bestByGroup);
            return rulesOf(bestByGroup);
        }
        consider(request, general, bestByGroup);
        consider(request, byApiKey.getById(scheme, clientId), bestByGroup);
        return rulesOf(bestByGroup);
    }

    /** {@link #tierFor(String)} for a client known by its client id under {@code scheme}. */
    String tierForClient(ClientIds scheme, String clientId) {
        List<String> tiers = tierByApiKey.getById(scheme, clientId);
        boolean known = !tiers.isEmpty() || !byApiKey.getById(scheme, clientId).isEmpty();
        if (!known && unknownKeys != UnknownApiKeyPolicy.DEFAULT_TIER && !killSwitch) {
            return UNKNOWN_KEYS;
        }
        return tiers.isEmpty() ? defaultTier : tiers.get(0);
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
}

package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Collects rules and switches for a {@link RuleSet} and refuses a set that contradicts itself (see
 * {@link RuleSet#builder}). The fields are the rule set's to read when it is built.
 */
public final class RuleSetBuilder {

    long version;
    final String defaultTier;
    ClientIdKeyring keyring = ClientIdKeyring.unkeyed();
    /** Tier API keys as configured: raw or hashed, so they are resolved at build time, under the keyring. */
    private final Map<String, List<String>> tierApiKeys = new LinkedHashMap<>();
    final Set<String> shadowTiers = new HashSet<>();
    /** Every tier named anywhere (default, enforced or shadow, listing keys, matched by a rule). */
    final Set<String> knownTiers = new HashSet<>();
    boolean killSwitch;
    final Map<String, Rule> rules = new LinkedHashMap<>();
    UnknownApiKeyPolicy unknownKeys = UnknownApiKeyPolicy.DEFAULT_TIER;

    RuleSetBuilder(String defaultTier) {
        this.defaultTier = PolicyNames.requireValid("ratelimit.default-tier", defaultTier);
        requireNotReserved("ratelimit.default-tier", defaultTier);
        knownTiers.add(defaultTier);
    }

    public RuleSetBuilder version(long version) {
        this.version = version;
        return this;
    }

    public RuleSetBuilder killSwitch(boolean on) {
        this.killSwitch = on;
        return this;
    }

    public RuleSetBuilder enforce(String tier, boolean enforce) {
        PolicyNames.requireValid("ratelimit.tiers." + tier, tier);
        knownTiers.add(tier);
        if (enforce) {
            shadowTiers.remove(tier);
        }
        else {
            shadowTiers.add(tier);
        }
        return this;
    }

    /** The client-id hashes API keys are matched by (default: unkeyed, as without a configured secret). */
    public RuleSetBuilder clientIds(ClientIdKeyring keyring) {
        this.keyring = keyring;
        return this;
    }

    /** Puts an API key (as sent, or {@linkplain HashedApiKey hashed}) in a tier. */
    public RuleSetBuilder apiKey(String apiKey, String tier) {
        String setting = "ratelimit.tiers." + tier + ".api-keys";
        PolicyNames.requireValid("ratelimit.tiers." + tier, tier);
        requireNotReserved("ratelimit.tiers." + tier, tier);
        if (apiKey == null || apiKey.isBlank()) {
            throw new InvalidLimitException(setting, setting + " contains an empty API key.");
        }
        tierApiKeys.computeIfAbsent(tier, t -> new ArrayList<>()).add(apiKey);
        knownTiers.add(tier);
        return this;
    }

    /**
     * What happens to API keys nobody listed; under {@link UnknownApiKeyPolicy#PER_ADDRESS}, {@code perAddress}
     * is their bucket: a rule of id, group and tier {@link RuleSet#UNKNOWN_KEYS} keyed by client address.
     */
    public RuleSetBuilder unknownApiKeys(UnknownApiKeyPolicy policy, Rule perAddress) {
        if (policy == UnknownApiKeyPolicy.PER_ADDRESS && (perAddress == null
                || !RuleSet.UNKNOWN_KEYS.equals(perAddress.id())
                || !perAddress.key().equals(List.of(Dimension.CLIENT_IP)))) {
            throw new IllegalArgumentException("the per-address policy needs its rule '" + RuleSet.UNKNOWN_KEYS
                    + "' keyed by client address, got " + perAddress);
        }
        this.unknownKeys = policy;
        rules.remove(RuleSet.UNKNOWN_KEYS);
        if (policy == UnknownApiKeyPolicy.PER_ADDRESS) {
            rules.put(RuleSet.UNKNOWN_KEYS, perAddress);
        }
        return this;
    }

    /**
     * Tier lists come from configuration only, so a key there that cannot match is refused (at start-up) rather
     * than reported: the secret and the list are deployed together.
     */
    ClientIdIndex<String> tiersByApiKey() {
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
    public RuleSetBuilder rule(Rule rule) {
        requireNotReserved("ratelimit.rules." + rule.id(), rule.id());
        rule.match().tiers().forEach(tier -> requireNotReserved("ratelimit.rules." + rule.id() + ".match.tiers",
                tier));
        rules.remove(rule.id());
        rules.put(rule.id(), rule);
        return this;
    }

    /** Drops the rule of that id, if any. */
    public RuleSetBuilder without(String id) {
        rules.remove(id);
        return this;
    }

    private static void requireNotReserved(String setting, String name) {
        if (RuleSet.UNKNOWN_KEYS.equals(name)) {
            throw new InvalidLimitException(setting, "'" + RuleSet.UNKNOWN_KEYS + "' is reserved for the bucket of API "
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

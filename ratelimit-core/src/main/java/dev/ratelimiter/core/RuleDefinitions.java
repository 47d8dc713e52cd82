package dev.ratelimiter.core;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The rules and switches an application configures, as the rule lifecycle ({@link RuleSetFactory}, {@link RuleSync},
 * {@link RuleAdmin}) reads them; the Spring glue implements it from {@code application.yml}. Rules are built only when
 * asked for, and every refusal is an {@link InvalidLimitException} naming the setting at fault: the configuration is
 * validated again with each set of runtime rules it is combined with.
 */
public interface RuleDefinitions {

    /** The tier of requests without an API key, or with one no tier lists. */
    String defaultTier();

    /** Whether the configured kill switch is on (a runtime switch overrides it). */
    boolean killSwitch();

    /** The configured tiers, in the order they are defined. */
    List<Tier> tiers();

    /** The configured rules by id, in the order they are defined (ties between equally specific rules go to the first). */
    Map<String, Definition> rules();

    /** A runtime rule from its stored spec of {@code name=value} pairs; refuses a spec that cannot be read. */
    Definition runtimeRule(String id, Map<String, String> spec);

    /** What happens to API keys no tier or override lists. */
    UnknownApiKeyPolicy unknownApiKeys();

    /** The bucket of unknown API keys, per client address; asked for only under {@link UnknownApiKeyPolicy#PER_ADDRESS}. */
    Rule unknownApiKeyRule();

    /**
     * The spec to store for a rule an operator sends: read strictly (a name that is no setting is refused, where the
     * store's own specs are read leniently) and with its API keys hashed under the current secret, never as sent.
     */
    Map<String, String> specToStore(String id, Map<String, String> sent);

    /** Runtime rules whose API keys need the operator, by id (see {@link RuleSync#apiKeyNotes}); empty if none. */
    Map<String, String> apiKeyNotes(RuntimeRules runtime);

    /** The client-id hashes API keys are matched by. */
    ClientIdKeyring keyring();

    /**
     * @param name the tier's name
     * @param apiKeys the API keys it lists, as sent or hashed
     * @param enforce whether its clients' denials are enforced (false: every rule acts as in shadow for them)
     * @param defaultRules its per-route-class rules by rule id, each built when asked for
     */
    record Tier(String name, List<String> apiKeys, boolean enforce, Map<String, Supplier<Rule>> defaultRules) {
    }

    /**
     * @param enabled whether the rule is in force
     * @param rule builds the rule, refusing an invalid one
     */
    record Definition(boolean enabled, Supplier<Rule> rule) {
    }
}

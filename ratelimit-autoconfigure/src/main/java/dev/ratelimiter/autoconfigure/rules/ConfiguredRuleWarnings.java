package dev.ratelimiter.autoconfigure.rules;

import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.UnknownApiKeyPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What is worth saying at start-up of a configuration that is valid but probably not meant: no limits at all, or an
 * unknown-key policy with no key listed anywhere (so that every key is unknown).
 */
public final class ConfiguredRuleWarnings {

    private static final Logger logger = LoggerFactory.getLogger(ConfiguredRuleWarnings.class);

    private ConfiguredRuleWarnings() {
    }

    public static RuleSet warnAbout(RuleSet configured) {
        // the per-address bucket of unknown keys (the default policy's) limits no client with a key anybody listed
        if (configured.rules().keySet().stream().allMatch(RuleSet.UNKNOWN_KEYS::equals)) {
            logger.warn("No rate limits are configured (ratelimit.tiers and ratelimit.rules are empty): "
                    + "every request passes unlimited until rules are added");
        }
        if (configured.unknownApiKeys() != UnknownApiKeyPolicy.DEFAULT_TIER && !configured.listsAnyApiKey()) {
            logger.warn("ratelimit.api-key.unknown.policy is {} (per-address by default) but no tier lists an API "
                    + "key (ratelimit.tiers.<tier>.api-keys) and no override names one: every key is unknown until "
                    + "runtime overrides name some. List the keys, or set the policy to default-tier where they are "
                    + "checked in front of the gateway", configured.unknownApiKeys());
        }
        return configured;
    }
}

package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.UnknownApiKeyPolicy;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The limiter's core: the client-id hashes, the validated rule set (configured rules, kept in step with the runtime
 * rule store), the buckets, and the evaluator. When no store bean exists by now (no Redis on the classpath,
 * {@code ratelimit.store.type=memory}), buckets and runtime rules live in this instance's memory.
 */
@AutoConfiguration(after = RateLimitRedisAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitAutoConfiguration {

    private static final Logger logger = LoggerFactory.getLogger(RateLimitAutoConfiguration.class);

    /**
     * Client ids under {@code ratelimit.client-id.secret}, and the previous secret while it is rotated. Without a
     * secret, the unkeyed hash of every release before it, so that upgrading changes no bucket key.
     */
    @Bean
    @ConditionalOnMissingBean
    ClientIdKeyring rateLimitClientIds(RateLimitProperties properties) {
        RateLimitProperties.ClientId settings = properties.getClientId();
        if (settings.getSecret() == null) {
            if (settings.getPreviousSecret() != null) {
                throw new InvalidLimitException("ratelimit.client-id.secret", "ratelimit.client-id.previous-secret is "
                        + "set but ratelimit.client-id.secret is not: a rotation needs the new secret as well. Set "
                        + "ratelimit.client-id.secret, or remove the previous one.");
            }
            logger.warn("ratelimit.client-id.secret is not set: client ids (bucket keys in Redis, decision events, the "
                    + "actuator view, the hashed API keys of customer overrides) are a plain SHA-256 of the API key, "
                    + "which anyone who can read them reverses for a guessable key by hashing candidates. Set "
                    + "ratelimit.client-id.secret (environment variable RATELIMIT_CLIENTID_SECRET) to a random string "
                    + "of at least {} bytes, e.g. the output of 'openssl rand -base64 32'; every bucket then starts "
                    + "afresh once (see 'Rotating the client-id secret' in the operator notes).",
                    ClientIds.MIN_SECRET_BYTES);
            return ClientIdKeyring.unkeyed();
        }
        ClientIds current = ClientIds.keyed("ratelimit.client-id.secret", settings.getSecret());
        ClientIds previous = settings.getPreviousSecret() == null ? null
                : ClientIds.keyed("ratelimit.client-id.previous-secret", settings.getPreviousSecret());
        return ClientIdKeyring.of(current, previous);
    }

    @Bean
    @ConditionalOnMissingBean
    RuleSetFactory rateLimitRuleSetFactory(RateLimitProperties properties, ClientIdKeyring clientIds,
            ObjectProvider<RegionShares> regions) {
        return new RuleSetFactory(properties, clientIds, regions.getIfAvailable());
    }

    @Bean
    @ConditionalOnMissingBean
    RuleSetHolder rateLimitRules(RuleSetFactory factory) {
        RuleSet configured = factory.configured();
        if (configured.rules().isEmpty()) {
            logger.warn("No rate limits are configured (ratelimit.tiers and ratelimit.rules are empty): "
                    + "every request passes unlimited until rules are added");
        }
        if (configured.unknownApiKeys() != UnknownApiKeyPolicy.DEFAULT_TIER && !configured.listsAnyApiKey()) {
            logger.warn("ratelimit.api-key.unknown.policy is {} but no tier lists an API key "
                    + "(ratelimit.tiers.<tier>.api-keys) and no override names one: every key is unknown until "
                    + "runtime overrides name some", configured.unknownApiKeys());
        }
        return new RuleSetHolder(configured);
    }

    @Bean
    @ConditionalOnMissingBean
    RateLimitStore rateLimitStore(RateLimitProperties properties) {
        return new LocalBucketStore(properties.getStore().getLocalMaxKeys());
    }

    @Bean
    @ConditionalOnMissingBean
    LiveInstances rateLimitLiveInstances() {
        return LiveInstances.SINGLE;
    }

    @Bean
    @ConditionalOnMissingBean
    RuleStore rateLimitRuleStore() {
        return new InMemoryRuleStore();
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "ratelimit.rule-store.enabled", matchIfMissing = true)
    RuleSync rateLimitRuleSync(RuleStore store, RuleSetFactory factory, RuleSetHolder rules,
            RateLimitProperties properties) {
        return new RuleSync(store, factory, rules, properties.getRuleStore().getPollInterval());
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RuleSync.class)
    RuleAdmin rateLimitRuleAdmin(RuleStore store, RuleSync sync, RuleSetFactory factory) {
        return new RuleAdmin(store, sync, factory);
    }

    @Bean
    @ConditionalOnMissingBean
    RateLimitEvaluator rateLimitEvaluator(RuleSetHolder rules, RateLimitStore store, ClientIdKeyring clientIds,
            ObjectProvider<RegionShares> regions) {
        return new RateLimitEvaluator(rules, store, clientIds.current(), regions.getIfAvailable());
    }
}

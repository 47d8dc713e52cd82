package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.UnknownApiKeyPolicy;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The limiter's core: the validated rule set (configured rules, kept in step with the runtime rule store), the
 * buckets, and the evaluator. When no store bean exists by now (no Redis on the classpath,
 * {@code ratelimit.store.type=memory}), buckets and runtime rules live in this instance's memory.
 */
@AutoConfiguration(after = RateLimitRedisAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitAutoConfiguration {

    private static final Logger logger = LoggerFactory.getLogger(RateLimitAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    RuleSetFactory rateLimitRuleSetFactory(RateLimitProperties properties) {
        return new RuleSetFactory(properties);
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
    RateLimitEvaluator rateLimitEvaluator(RuleSetHolder rules, RateLimitStore store) {
        return new RateLimitEvaluator(rules, store);
    }
}

package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.rules.ConfiguredRuleWarnings;
import dev.ratelimiter.autoconfigure.rules.PropertyRuleDefinitions;
import dev.ratelimiter.autoconfigure.rules.RuleSyncLifecycle;
import dev.ratelimiter.autoconfigure.security.ClientIdSecrets;
import dev.ratelimiter.autoconfigure.security.ServerForwarding;
import dev.ratelimiter.core.AbuseScores;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleDefinitions;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuleSync;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.core.env.Environment;

/**
 * The limiter's core: the client-id hashes, the validated rule set (configured rules, kept in step with the runtime
 * rule store), the buckets, and the evaluator. When no store bean exists by now (no Redis on the classpath,
 * {@code ratelimit.store.type=memory}), buckets and runtime rules live in this instance's memory.
 */
@AutoConfiguration(after = RateLimitRedisAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@ImportRuntimeHints(SpringSecurityProbeRuntimeHints.class)
public final class RateLimitAutoConfiguration {

    /** Client ids under {@code ratelimit.client-id.secret} (see {@link ClientIdSecrets}). */
    @Bean
    @ConditionalOnMissingBean
    ClientIdKeyring rateLimitClientIds(RateLimitProperties properties) {
        return ClientIdSecrets.keyring(properties.getClientId());
    }

    /** Whether the web server rewrites the client address from forwarding headers (see {@link ServerForwarding}). */
    @Bean
    ServerForwarding rateLimitServerForwarding(Environment environment, RateLimitProperties properties) {
        return ServerForwarding.of(environment, properties.getIdentity());
    }

    @Bean
    @ConditionalOnMissingBean
    RuleDefinitions rateLimitRuleDefinitions(RateLimitProperties properties, ClientIdKeyring clientIds,
            ServerForwarding forwarding) {
        return new PropertyRuleDefinitions(properties, clientIds, forwarding);
    }

    @Bean
    @ConditionalOnMissingBean
    RuleSetFactory rateLimitRuleSetFactory(RuleDefinitions definitions, ObjectProvider<RegionShares> regions) {
        return new RuleSetFactory(definitions, regions.getIfAvailable());
    }

    @Bean
    @ConditionalOnMissingBean
    RuleSetHolder rateLimitRules(RuleSetFactory factory, ServerForwarding forwarding) {
        return new RuleSetHolder(ConfiguredRuleWarnings.warnAbout(forwarding.requireReliable(factory.configured())));
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

    /** Started with the context, lazy beans or not (see {@link RuleSyncLifecycle}). */
    @Bean
    @ConditionalOnBean(RuleSync.class)
    RuleSyncLifecycle rateLimitRuleSyncLifecycle(RuleSync sync) {
        return new RuleSyncLifecycle(sync);
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
            ObjectProvider<RegionShares> regions, ObjectProvider<AbuseScores> abuse) {
        return new RateLimitEvaluator(rules, store, clientIds.current(), regions.getIfAvailable(),
                abuse.getIfAvailable());
    }
}

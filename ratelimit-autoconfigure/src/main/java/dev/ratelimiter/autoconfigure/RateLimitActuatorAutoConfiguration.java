package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.actuate.OperatorJsonRuntimeHints;
import dev.ratelimiter.autoconfigure.actuate.RateLimitControlEndpoint;
import dev.ratelimiter.autoconfigure.actuate.RateLimitHealthIndicator;
import dev.ratelimiter.autoconfigure.actuate.RateLimitRulesEndpoint;
import dev.ratelimiter.autoconfigure.actuate.RateLimitView;
import dev.ratelimiter.autoconfigure.actuate.RedisHealthNotice;
import dev.ratelimiter.autoconfigure.metrics.MicrometerStoreMetrics;
import dev.ratelimiter.autoconfigure.metrics.MicrometerVerdictListener;
import dev.ratelimiter.autoconfigure.metrics.RuleSyncMetrics;
import dev.ratelimiter.autoconfigure.metrics.ResponseChargeMeters;
import dev.ratelimiter.autoconfigure.metrics.RuleTags;
import dev.ratelimiter.autoconfigure.metrics.StoreGauges;
import dev.ratelimiter.autoconfigure.rules.RuleView;
import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.autoconfigure.security.OperatorRoles;
import dev.ratelimiter.autoconfigure.security.RateLimitSecretsSanitizer;
import dev.ratelimiter.autoconfigure.store.RateLimitRedis;
import dev.ratelimiter.autoconfigure.store.StoreParts;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RecentDecisions;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.StoreMetrics;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.core.VerdictListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.core.env.Environment;

/**
 * The operator's view and controls: the {@code ratelimit} and {@code ratelimitcontrol} endpoints, the
 * {@code rateLimit} health component, and Micrometer counters.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ImportRuntimeHints(OperatorJsonRuntimeHints.class)
public final class RateLimitActuatorAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RuleAdmin.class)
    @ConditionalOnAvailableEndpoint
    RateLimitRulesEndpoint rateLimitRulesEndpoint(RuleAdmin admin, RuleSync sync, RuleSetFactory factory,
            ObjectProvider<RateLimitStore> store, ObjectProvider<StoreStack> stack,
            ObjectProvider<LiveInstances> instances, ObjectProvider<RecentDecisions> recent,
            ObjectProvider<OperatorAccounts> accounts) {
        return new RateLimitRulesEndpoint(admin, new RuleView(sync, factory.definitions().keyring()),
                new RateLimitView(store.getIfAvailable(), StoreParts.failSafe(stack, store), instances.getIfAvailable(),
                        recent.getIfAvailable()), roles(accounts));
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RuleAdmin.class)
    @ConditionalOnAvailableEndpoint
    RateLimitControlEndpoint rateLimitControlEndpoint(RuleAdmin admin, ObjectProvider<OperatorAccounts> accounts) {
        return new RateLimitControlEndpoint(admin, roles(accounts));
    }

    /** The endpoints check roles themselves whenever they are authenticated (the accounts exist only then). */
    private static OperatorRoles roles(ObjectProvider<OperatorAccounts> accounts) {
        return new OperatorRoles(accounts.getIfAvailable() != null);
    }

    /** Secrets and API keys masked wherever the actuator shows configuration. */
    @Bean
    SanitizingFunction rateLimitSecretsSanitizer() {
        return new RateLimitSecretsSanitizer();
    }

    @Bean
    @ConditionalOnMissingBean(name = "rateLimitHealthIndicator")
    @ConditionalOnBean(RuleSync.class)
    @ConditionalOnEnabledHealthIndicator("ratelimit")
    RateLimitHealthIndicator rateLimitHealthIndicator(RuleSync sync, ObjectProvider<StoreStack> stack,
            ObjectProvider<RateLimitStore> store, LiveInstances instances) {
        return new RateLimitHealthIndicator(sync, StoreParts.failSafe(stack, store), instances);
    }

    /** Where the limiter uses Redis, says once how Redis shows in health and what to probe. */
    @Bean
    SmartInitializingSingleton rateLimitRedisHealthNotice(ObjectProvider<RateLimitRedis> redis,
            Environment environment) {
        return () -> redis.ifAvailable(used -> RedisHealthNotice.log(environment));
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    @EnableConfigurationProperties(RateLimitMetricsProperties.class)
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean(StoreMetrics.class)
        StoreMetrics micrometerStoreMetrics(MeterRegistry registry) {
            return new MicrometerStoreMetrics(registry);
        }

        @Bean
        @ConditionalOnBean(RateLimitStore.class)
        MeterBinder rateLimitBreakerMetrics(ObjectProvider<StoreStack> stack, ObjectProvider<RateLimitStore> store) {
            return new StoreGauges(() -> StoreParts.failSafe(stack, store));
        }

        @Bean
        @ConditionalOnMissingBean(name = "micrometerVerdictListener")
        VerdictListener micrometerVerdictListener(MeterRegistry registry, RuleSetHolder rules,
                RuleSetFactory factory, RateLimitMetricsProperties properties) {
            RateLimitMetricsProperties.RuleTag tag = properties.getRuleTag();
            MicrometerVerdictListener listener = new MicrometerVerdictListener(registry, new RuleTags(
                    tag.getConfiguredRules(), tag.getRuntimeRules(), tag.getKeepIds(), factory::isConfigured, rules));
            rules.onReplace(changed -> listener.rulesChanged());
            // the rule sync may have put a set in force between the tags' first reading and the line above
            listener.rulesChanged();
            return listener;
        }

        @Bean
        @ConditionalOnMissingBean
        ResponseChargeMeters rateLimitResponseChargeMeters(MeterRegistry registry) {
            return new ResponseChargeMeters(registry);
        }

        @Bean
        @ConditionalOnBean(RuleSync.class)
        MeterBinder rateLimitRuleMetrics(RuleSync sync) {
            return new RuleSyncMetrics(sync);
        }
    }
}

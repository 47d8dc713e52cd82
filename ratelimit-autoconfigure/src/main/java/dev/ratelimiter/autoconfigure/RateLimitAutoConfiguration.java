package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.LimitPlan;
import dev.ratelimiter.core.LocalTokenBucketStore;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RateLimitStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The limiter's Spring-free core: the validated limit plan, this instance's buckets, and the evaluator.
 * When no store bean exists by now (no Redis on the classpath, {@code ratelimit.store.type=memory}, or Redis
 * not answering at start-up in {@code auto} mode), buckets live in memory.
 */
@AutoConfiguration(after = RateLimitRedisAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitAutoConfiguration {

    private static final Logger logger = LoggerFactory.getLogger(RateLimitAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    LimitPlan rateLimitPlan(RateLimitProperties properties) {
        if (properties.getTiers().isEmpty()) {
            logger.warn("No rate limits are configured (ratelimit.tiers is empty): every request passes unlimited");
        }
        return LimitPlanFactory.create(properties);
    }

    @Bean
    @ConditionalOnMissingBean
    RateLimitStore rateLimitStore(RateLimitProperties properties) {
        return new LocalTokenBucketStore(properties.getStore().getLocalMaxKeys());
    }

    @Bean
    @ConditionalOnMissingBean
    RateLimitEvaluator rateLimitEvaluator(LimitPlan plan, RateLimitStore store) {
        return new RateLimitEvaluator(plan, store);
    }
}

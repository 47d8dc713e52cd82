package dev.ratelimiter.test;

import dev.ratelimiter.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimiter.core.RateLimitStore;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The limiter's store in a test: {@link TestBuckets}, ahead of the in-memory store the limiter would make itself.
 * Imported by {@link AutoConfigureRateLimiterTest} only, never by the application's own auto-configuration.
 */
@AutoConfiguration(before = RateLimitAutoConfiguration.class)
public final class RateLimiterTestAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(RateLimitStore.class)
    TestBuckets rateLimitStore() {
        return new TestBuckets();
    }
}

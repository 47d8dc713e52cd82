package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.store.LimiterConnectionConfiguration;
import dev.ratelimiter.autoconfigure.store.LimiterScriptRuntimeHints;
import dev.ratelimiter.autoconfigure.store.RateLimitRedis;
import dev.ratelimiter.autoconfigure.store.RedisStoreStackConfiguration;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuleStoreUntilShared;
import dev.ratelimiter.core.SettleLoop;
import dev.ratelimiter.redis.InstanceHeartbeats;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.redis.PermitRenewal;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisRuleStore;
import io.lettuce.core.RedisClient;
import org.springframework.boot.LazyInitializationExcludeFilter;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Buckets and runtime rules in Redis, shared by every gateway instance, when Spring Data Redis with Lettuce is
 * configured and {@code ratelimit.store.type} is not {@code memory}. Each decision is one atomic script call guarded
 * by {@code ratelimit.store.timeout}, on the limiter's own connection (opened in the background from the application's
 * Lettuce client, {@link LimiterConnectionConfiguration}); a slow or failing Redis is bridged by deciding from this
 * instance's memory ({@link RedisStoreStackConfiguration}).
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
        "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration" })
@ConditionalOnClass({ LettuceConnectionFactory.class, RedisClient.class })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Conditional(OnRedisStoreCondition.class)
@ConditionalOnBean(LettuceConnectionFactory.class)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({ LimiterConnectionConfiguration.class, RedisStoreStackConfiguration.class })
@ImportRuntimeHints(LimiterScriptRuntimeHints.class)
public final class RateLimitRedisAutoConfiguration {

    /** Runtime rules in Redis; with {@code store.type: auto}, in memory until Redis first answers. */
    @Bean
    @ConditionalOnMissingBean
    RuleStore rateLimitRuleStore(RateLimitRedis redis, LimiterConnection connection, RedisKeys keys) {
        RedisRuleStore shared = new RedisRuleStore(connection, keys);
        if (!redis.auto()) {
            return shared;
        }
        RuleStoreUntilShared store = new RuleStoreUntilShared(new InMemoryRuleStore(), shared, connection::connected);
        connection.whenConnected(store::sharedAnswered);
        return store;
    }

    /**
     * The background loops start as their beans are made, and nothing on the request path asks for them: with
     * {@code spring.main.lazy-initialization=true} they would never run (local-mode shares never settled, permits
     * never renewed, this instance never counted).
     */
    @Bean
    static LazyInitializationExcludeFilter rateLimitBackgroundLoopsAreEager() {
        return LazyInitializationExcludeFilter.forBeanTypes(SettleLoop.class, PermitRenewal.class,
                InstanceHeartbeats.class);
    }
}

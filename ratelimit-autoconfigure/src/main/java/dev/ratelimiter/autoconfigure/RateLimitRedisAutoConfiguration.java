package dev.ratelimiter.autoconfigure;

import java.util.List;

import dev.ratelimiter.core.LocalTokenBucketStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.StoreWithLocalFallback;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisTokenBucketStore;
import dev.ratelimiter.redis.TokenBucketScript;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Buckets in Redis, shared by every gateway instance, when Spring Data Redis (reactive) is configured and
 * {@code ratelimit.store.type} is not {@code memory}. Each decision is one atomic script call guarded by
 * {@code ratelimit.store.timeout}; a slow or failing Redis is bridged by deciding from this instance's memory.
 */
@AutoConfiguration(afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration")
@ConditionalOnClass(ReactiveStringRedisTemplate.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Conditional(OnRedisStoreCondition.class)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitRedisAutoConfiguration {

    private static final Logger logger = LoggerFactory.getLogger(RateLimitRedisAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    RedisKeys rateLimitRedisKeys(RateLimitProperties properties) {
        return new RedisKeys(properties.getStore().getKeyPrefix());
    }

    @Bean
    @ConditionalOnMissingBean(name = "rateLimitTokenBucketScript")
    RedisScript<List<Long>> rateLimitTokenBucketScript() {
        return TokenBucketScript.load();
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(ReactiveRedisConnectionFactory.class)
    RateLimitStore rateLimitStore(RateLimitProperties properties, ReactiveRedisConnectionFactory connectionFactory,
            RedisScript<List<Long>> rateLimitTokenBucketScript, RedisKeys keys) {
        RateLimitProperties.Store store = properties.getStore();
        LocalTokenBucketStore local = new LocalTokenBucketStore(store.getLocalMaxKeys());
        ReactiveStringRedisTemplate redis = new ReactiveStringRedisTemplate(connectionFactory);
        RedisTokenBucketStore redisStore = new RedisTokenBucketStore(redis, rateLimitTokenBucketScript, keys);
        if (!RedisWarmup.succeeds(redisStore, redis, keys, store.getStartupProbeTimeout())) {
            if (store.getType() == RateLimitProperties.StoreType.AUTO) {
                logger.warn("Redis is not reachable ({}); rate limits are kept in this instance's memory only. "
                        + "Start Redis and restart, or set ratelimit.store.type=redis to require it.",
                        RedisWarmup.describe(connectionFactory));
                return local;
            }
            logger.warn("Redis is not reachable ({}) at start-up; deciding from this instance's memory until it "
                    + "answers.", RedisWarmup.describe(connectionFactory));
        }
        return new StoreWithLocalFallback(redisStore, local, store.getTimeout());
    }
}

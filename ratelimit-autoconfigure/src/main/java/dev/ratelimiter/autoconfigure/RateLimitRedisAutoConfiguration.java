package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.DenialCache;
import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.LeaseStore;
import dev.ratelimiter.core.ModeRoutingStore;
import dev.ratelimiter.core.SettleLoop;
import dev.ratelimiter.core.WithoutStore;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.StoreMetrics;
import dev.ratelimiter.redis.InstanceHeartbeats;
import dev.ratelimiter.redis.PermitRenewal;
import dev.ratelimiter.redis.RateLimitScript;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisRateLimitStore;
import dev.ratelimiter.redis.RedisRuleStore;
import dev.ratelimiter.redis.RedisSettleClient;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Buckets and runtime rules in Redis, shared by every gateway instance, when Spring Data Redis (reactive) is
 * configured and {@code ratelimit.store.type} is not {@code memory}. Each decision is one atomic script call guarded
 * by {@code ratelimit.store.timeout}; a slow or failing Redis is bridged by deciding from this instance's memory.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration",
        "io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration" })
@ConditionalOnClass(ReactiveStringRedisTemplate.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Conditional(OnRedisStoreCondition.class)
@ConditionalOnBean(ReactiveRedisConnectionFactory.class)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitRedisAutoConfiguration {

    private static final Logger logger = LoggerFactory.getLogger(RateLimitRedisAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    RedisKeys rateLimitRedisKeys(RateLimitProperties properties) {
        return new RedisKeys(properties.getStore().getKeyPrefix());
    }

    @Bean
    @ConditionalOnMissingBean(name = "rateLimitScript")
    RedisScript<List<Long>> rateLimitScript() {
        return RateLimitScript.load();
    }

    /** Redis as the limiter uses it, checked once at start-up. */
    @Bean
    @ConditionalOnMissingBean
    RateLimitRedis rateLimitRedis(RateLimitProperties properties, ReactiveRedisConnectionFactory connectionFactory,
            RedisScript<List<Long>> rateLimitScript, RedisKeys keys) {
        ReactiveStringRedisTemplate template = new ReactiveStringRedisTemplate(connectionFactory);
        boolean cluster = connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware();
        RedisRateLimitStore store = new RedisRateLimitStore(template, rateLimitScript, keys, cluster);
        RateLimitProperties.Store settings = properties.getStore();
        boolean answered = RedisWarmup.succeeds(store, template, keys, settings.getStartupProbeTimeout());
        String where = RedisWarmup.describe(connectionFactory);
        if (!answered && settings.getType() == RateLimitProperties.StoreType.AUTO) {
            logger.warn("Redis is not reachable ({}); rate limits and runtime rules are kept in this instance's "
                    + "memory only. Start Redis and restart, or set ratelimit.store.type=redis to require it.", where);
        }
        else if (!answered) {
            logger.warn("Redis is not reachable ({}) at start-up; deciding from this instance's memory until it "
                    + "answers.", where);
        }
        return new RateLimitRedis(template, store, keys, cluster,
                answered || settings.getType() == RateLimitProperties.StoreType.REDIS);
    }

    @Bean(initMethod = "start", destroyMethod = "stop")
    @ConditionalOnMissingBean
    InstanceHeartbeats rateLimitInstanceHeartbeats(RateLimitRedis redis, RedisKeys keys,
            RateLimitProperties properties) {
        return new InstanceHeartbeats(redis.template(), keys, properties.getStore().getHeartbeatInterval());
    }

    @Bean
    @ConditionalOnMissingBean
    RateLimitStore rateLimitStore(RateLimitRedis redis, RateLimitProperties properties, LiveInstances instances,
            ObjectProvider<CircuitBreakerRegistry> breakers, ObjectProvider<StoreMetrics> metrics,
            Environment environment) {
        RateLimitProperties.Store settings = properties.getStore();
        LocalBucketStore local = new LocalBucketStore(settings.getLocalMaxKeys());
        if (!redis.use()) {
            return local;
        }
        CircuitBreaker breaker = StoreBreaker.of(breakers.getIfAvailable(CircuitBreakerRegistry::ofDefaults),
                settings.getBreakerName(), environment);
        StoreMetrics storeMetrics = metrics.getIfAvailable(() -> StoreMetrics.NONE);
        FailSafeStore failSafe = new FailSafeStore(redis.store(), local, settings.getTimeout(), breaker, instances,
                storeMetrics);
        RateLimitStore exact = settings.isDenialCache() ? new DenialCache(failSafe, settings.getLocalMaxKeys())
                : failSafe;
        WithoutStore withoutStore = new WithoutStore(new LocalBucketStore(settings.getLocalMaxKeys()), instances,
                storeMetrics, () -> Duration.ofSeconds(1));
        Duration interval = settings.getSettleInterval();
        LeaseStore leases = new LeaseStore(new RedisSettleClient(redis.template(), redis.keys(),
                interval.multipliedBy(10), redis.cluster()), withoutStore, instances, interval,
                settings.getLocalMaxKeys(), System::nanoTime);
        return new ModeRoutingStore(exact, leases);
    }

    @Bean(initMethod = "start", destroyMethod = "stop")
    @ConditionalOnMissingBean
    SettleLoop rateLimitSettleLoop(RateLimitStore store, RateLimitProperties properties) {
        return new SettleLoop(store.find(LeaseStore.class).orElse(null), properties.getStore().getSettleInterval());
    }

    /** Renews the leases of concurrency permits held for running requests (a quarter-second check). */
    @Bean(initMethod = "start", destroyMethod = "stop")
    @ConditionalOnMissingBean
    PermitRenewal rateLimitPermitRenewal(RateLimitRedis redis) {
        return new PermitRenewal(redis.store().permits(), Duration.ofMillis(250));
    }

    @Bean
    @ConditionalOnMissingBean
    RuleStore rateLimitRuleStore(RateLimitRedis redis, RedisKeys keys) {
        return redis.use() ? new RedisRuleStore(redis.template(), keys) : new InMemoryRuleStore();
    }

    /**
     * @param template the limiter's own template (string keys and values)
     * @param store the Redis bucket store
     * @param keys key names
     * @param cluster whether Redis is a cluster (scripts are split by slot)
     * @param use whether to use Redis (false: it did not answer at start-up in auto mode)
     */
    record RateLimitRedis(ReactiveStringRedisTemplate template, RedisRateLimitStore store, RedisKeys keys,
            boolean cluster, boolean use) {
    }
}

package dev.ratelimiter.autoconfigure;

import java.time.Duration;

import dev.ratelimiter.core.DenialCache;
import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.LeaseStore;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.MemoryUntilShared;
import dev.ratelimiter.core.ModeRoutingStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuleStoreUntilShared;
import dev.ratelimiter.core.SettleLoop;
import dev.ratelimiter.core.StoreBreaker;
import dev.ratelimiter.core.StoreMetrics;
import dev.ratelimiter.core.WithoutStore;
import dev.ratelimiter.redis.InstanceHeartbeats;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.redis.PermitRenewal;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisRateLimitStore;
import dev.ratelimiter.redis.RedisRuleStore;
import dev.ratelimiter.redis.RedisSettleClient;
import dev.ratelimiter.redis.RedisWarmup;
import io.lettuce.core.RedisClient;
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
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Buckets and runtime rules in Redis, shared by every gateway instance, when Spring Data Redis with Lettuce is
 * configured and {@code ratelimit.store.type} is not {@code memory}. Each decision is one atomic script call guarded
 * by {@code ratelimit.store.timeout}, on the limiter's own connection (opened in the background from the application's
 * Lettuce client); a slow or failing Redis is bridged by deciding from this instance's memory.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
        "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration" })
@ConditionalOnClass({ LettuceConnectionFactory.class, RedisClient.class })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Conditional(OnRedisStoreCondition.class)
@ConditionalOnBean(LettuceConnectionFactory.class)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitRedisAutoConfiguration {

    private static final Logger logger = LoggerFactory.getLogger(RateLimitRedisAutoConfiguration.class);

    /** The longest a command on the limiter's connection stays unanswered before Lettuce gives up on it. */
    static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

    @Bean
    @ConditionalOnMissingBean
    RedisKeys rateLimitRedisKeys(RateLimitProperties properties) {
        return new RedisKeys(properties.getStore().getKeyPrefix());
    }

    /** The limiter's own connection, opening in the background from the moment the context creates it. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    LimiterConnection rateLimitConnection(LettuceConnectionFactory connectionFactory, RateLimitProperties properties) {
        LimiterConnection connection = new LimiterConnection(connectionFactory::getNativeClient,
                RedisLocation.describe(connectionFactory), COMMAND_TIMEOUT, properties.getStore().getReconnectMaxDelay());
        connection.start();
        return connection;
    }

    /** Closes the limiter's connection before the connection factory shuts the Redis client down. */
    @Bean
    LimiterConnectionLifecycle rateLimitConnectionLifecycle(LimiterConnection connection) {
        return new LimiterConnectionLifecycle(connection);
    }

    /** Redis as the limiter uses it, checked once at start-up. */
    @Bean
    @ConditionalOnMissingBean
    RateLimitRedis rateLimitRedis(RateLimitProperties properties, LettuceConnectionFactory connectionFactory,
            LimiterConnection connection, RedisKeys keys) {
        boolean cluster = connectionFactory.isClusterAware();
        RedisRateLimitStore store = new RedisRateLimitStore(connection, keys, cluster);
        StoreProperties settings = properties.getStore();
        boolean answered = RedisWarmup.succeeds(store, connection, settings.getStartupProbeTimeout());
        if (!answered && settings.getType() == StoreProperties.StoreType.AUTO) {
            logger.warn("Redis is not reachable ({}); rate limits and runtime rules are kept in this instance's "
                    + "memory until it answers (it is tried again in the background).", connection.description());
        }
        else if (!answered) {
            logger.warn("Redis is not reachable ({}) at start-up; deciding by each rule's failure mode until it "
                    + "answers.", connection.description());
        }
        return new RateLimitRedis(store, keys, cluster, settings.getType() == StoreProperties.StoreType.AUTO);
    }

    @Bean(initMethod = "start", destroyMethod = "stop")
    @ConditionalOnMissingBean
    InstanceHeartbeats rateLimitInstanceHeartbeats(LimiterConnection connection, RedisKeys keys,
            RateLimitProperties properties) {
        return new InstanceHeartbeats(connection, keys, properties.getStore().getHeartbeatInterval(),
                properties.getStore().getExpectedInstances());
    }

    @Bean
    @ConditionalOnMissingBean
    RateLimitStore rateLimitStore(RateLimitRedis redis, LimiterConnection connection, RateLimitProperties properties,
            LiveInstances instances, ObjectProvider<StoreMetrics> metrics, Environment environment) {
        StoreProperties settings = properties.getStore();
        StoreBreaker breaker = new StoreBreaker(settings.getBreakerName(),
                StoreBreakerSettings.of(environment, settings.getBreakerName()));
        StoreMetrics storeMetrics = metrics.getIfAvailable(() -> StoreMetrics.NONE);
        FailSafeStore failSafe = new FailSafeStore(redis.store(), new LocalBucketStore(settings.getLocalMaxKeys()),
                settings.getTimeout(), breaker, instances, storeMetrics);
        RateLimitStore exact = settings.isDenialCache() ? new DenialCache(failSafe, settings.getLocalMaxKeys())
                : failSafe;
        WithoutStore withoutStore = new WithoutStore(new LocalBucketStore(settings.getLocalMaxKeys()), instances,
                storeMetrics, () -> Duration.ofSeconds(1));
        Duration interval = settings.getSettleInterval();
        LeaseStore leases = new LeaseStore(new RedisSettleClient(connection, redis.keys(),
                interval.multipliedBy(10), redis.cluster()), withoutStore, instances, interval,
                settings.getLocalMaxKeys(), System::nanoTime);
        RateLimitStore shared = new ModeRoutingStore(exact, leases);
        if (!redis.auto()) {
            return shared;
        }
        MemoryUntilShared store = new MemoryUntilShared(new LocalBucketStore(settings.getLocalMaxKeys()), shared,
                connection::connected, "Redis (" + connection.description() + ")");
        connection.whenConnected(store::onShared);
        return store;
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
     * @param store the Redis bucket store
     * @param keys key names
     * @param cluster whether Redis is a cluster (scripts are split by slot)
     * @param auto whether {@code store.type} is auto: memory until Redis first answers
     */
    record RateLimitRedis(RedisRateLimitStore store, RedisKeys keys, boolean cluster, boolean auto) {
    }
}

package dev.ratelimiter.autoconfigure.store;

import java.time.Duration;

import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.autoconfigure.RateLimitRedisAutoConfiguration;
import dev.ratelimiter.autoconfigure.StoreProperties;
import dev.ratelimiter.redis.InstanceHeartbeats;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisRateLimitStore;
import dev.ratelimiter.redis.RedisWarmup;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The limiter's own Redis connection, the key names, the start-up check and the instance heartbeats; imported by
 * {@link RateLimitRedisAutoConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
public final class LimiterConnectionConfiguration {

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
        StoreProperties settings = properties.getStore();
        boolean cluster = RedisLocation.splitBySlot(connectionFactory, settings.getRedisTopology());
        RedisRateLimitStore store = new RedisRateLimitStore(connection, keys, cluster, settings.getTimeout(),
                settings.effectiveMaxWait(), settings.getCallsInFlight());
        boolean auto = settings.getType() == StoreProperties.StoreType.AUTO;
        RedisWarmup.atStartup(store, connection, settings.getStartupProbeTimeout(), auto);
        return new RateLimitRedis(store, keys, cluster, auto);
    }

    @Bean(initMethod = "start", destroyMethod = "stop")
    @ConditionalOnMissingBean
    InstanceHeartbeats rateLimitInstanceHeartbeats(LimiterConnection connection, RedisKeys keys,
            RateLimitProperties properties, Environment environment) {
        FleetSizeWarning.warnIfUnset(environment, properties.getStore());
        return new InstanceHeartbeats(connection, keys, properties.getStore().getHeartbeatInterval(),
                properties.getStore().getExpectedInstances());
    }
}

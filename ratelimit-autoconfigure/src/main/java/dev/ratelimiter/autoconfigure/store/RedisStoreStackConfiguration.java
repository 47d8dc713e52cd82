package dev.ratelimiter.autoconfigure.store;

import java.time.Duration;

import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.autoconfigure.RateLimitRedisAutoConfiguration;
import dev.ratelimiter.autoconfigure.StoreProperties;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.SettleLoop;
import dev.ratelimiter.core.StoreBreaker;
import dev.ratelimiter.core.StoreMetrics;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.gateway.StoreObservations;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.redis.PermitRenewal;
import dev.ratelimiter.redis.RedisFallbackCharges;
import dev.ratelimiter.redis.RedisSettleClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The Redis store stack ({@link StoreStack}: fail-safe, denial cache, local-mode leases, memory until Redis answers)
 * bound from {@code ratelimit.store.*}, the settle loop of its leases and the renewal of concurrency permits; imported
 * by {@link RateLimitRedisAutoConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
public final class RedisStoreStackConfiguration {

    /** How often the leases of concurrency permits held for running requests are checked for renewal. */
    static final Duration PERMIT_RENEWAL_CHECK = Duration.ofMillis(250);

    /** Not made when the application gives its own store: that store is then used as it is. */
    @Bean
    @ConditionalOnMissingBean({ StoreStack.class, RateLimitStore.class })
    StoreStack rateLimitStoreStack(RateLimitRedis redis, LimiterConnection connection, RateLimitProperties properties,
            LiveInstances instances, ObjectProvider<StoreMetrics> metrics, ObjectProvider<StoreObservations> observations,
            Environment environment) {
        StoreProperties settings = properties.getStore();
        StoreStack.Builder stack = StoreStack.builder()
                // observed under the timeout and breaker: a call the breaker spares is no store call
                .sharedStore(observations.getIfAvailable(() -> StoreObservations.OFF).observe(redis.store()))
                .settleClient(RedisSettleClient.settlingEvery(settings.getSettleInterval(), connection, redis.keys(),
                        redis.cluster()))
                .breaker(new StoreBreaker(settings.getBreakerName(),
                        StoreBreakerSettings.of(environment, settings.getBreakerName())))
                .liveInstances(instances)
                .metrics(metrics.getIfAvailable(() -> StoreMetrics.NONE))
                .timeout(settings.getTimeout())
                // the Redis store times each call from its send itself; this is the backstop over everything
                .maxWait(settings.effectiveMaxWait())
                .fallbackCharges(new RedisFallbackCharges(connection, redis.keys(), redis.cluster()))
                .fallbackShareFactor(settings.getFallbackShareFactor())
                .settleInterval(settings.getSettleInterval())
                .settleMaxSilence(settings.getSettleMaxSilence())
                .localMaxKeys(settings.getLocalMaxKeys())
                .denialCache(settings.isDenialCache());
        if (redis.auto()) {
            stack.memoryUntilShared(connection::connected, "Redis (" + connection.description() + ")");
        }
        StoreStack built = stack.build();
        built.memoryUntilShared().ifPresent(store -> connection.whenConnected(store::onShared));
        return built;
    }

    @Bean
    @ConditionalOnMissingBean
    RateLimitStore rateLimitStore(StoreStack stack) {
        return stack.store();
    }

    @Bean(initMethod = "start", destroyMethod = "stop")
    @ConditionalOnMissingBean
    SettleLoop rateLimitSettleLoop(ObjectProvider<StoreStack> stack, ObjectProvider<RateLimitStore> store,
            RateLimitProperties properties) {
        // Without our stack (the application gave its own store) the leases inside that store, if any, are settled.
        StoreStack stores = stack.getIfAvailable();
        return stores != null ? stores.settleLoop()
                : new SettleLoop(StoreParts.leases(store), properties.getStore().getSettleInterval());
    }

    @Bean(initMethod = "start", destroyMethod = "stop")
    @ConditionalOnMissingBean
    PermitRenewal rateLimitPermitRenewal(RateLimitRedis redis) {
        return new PermitRenewal(redis.store().permits(), PERMIT_RENEWAL_CHECK);
    }
}

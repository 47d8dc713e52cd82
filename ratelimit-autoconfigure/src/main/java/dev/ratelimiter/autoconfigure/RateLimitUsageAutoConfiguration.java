package dev.ratelimiter.autoconfigure;

import java.time.Clock;

import dev.ratelimiter.autoconfigure.store.RateLimitRedis;
import dev.ratelimiter.core.AbuseScores;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.StoreNotConnectedException;
import dev.ratelimiter.core.UsageLookup;
import dev.ratelimiter.core.UsageReader;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.redis.RedisUsageReader;
import io.lettuce.core.RedisClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/**
 * Reading a client's usage without spending ({@link UsageLookup}), for the operators' usage API and the clients'
 * {@code /ratelimit/me}: from Redis with the read-only peek script when the buckets are there, else from the
 * in-memory store itself. The HTTP side is wired where each is served.
 */
@AutoConfiguration(after = { RateLimitAutoConfiguration.class, RateLimitRedisAutoConfiguration.class })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnBean(RuleSetHolder.class)
@EnableConfigurationProperties({ RateLimitProperties.class, UsageApiProperties.class })
public final class RateLimitUsageAutoConfiguration {

    /** The buckets in Redis, read by the peek script within the store's longest wait. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(RedisClient.class)
    @ConditionalOnBean({ RateLimitRedis.class, LimiterConnection.class })
    static class RedisUsage {

        @Bean
        @ConditionalOnMissingBean
        UsageLookup rateLimitUsageLookup(RuleSetHolder rules, ClientIdKeyring clientIds,
                ObjectProvider<RegionShares> regions, ObjectProvider<AbuseScores> abuse, RateLimitRedis redis,
                LimiterConnection connection, RateLimitProperties properties) {
            return lookup(rules, clientIds, regions, abuse, new RedisUsageReader(connection, redis.keys(), redis.cluster(),
                    properties.getStore().effectiveMaxWait()));
        }
    }

    /**
     * Without Redis: the store itself when it can be read (the in-memory store, the test kit's buckets); else a reader
     * that says it cannot (an application's own store). The reader is not a bean of its own: the in-memory store is
     * one already, under its store type.
     */
    @Bean
    @ConditionalOnMissingBean
    UsageLookup rateLimitUsageLookup(RuleSetHolder rules, ClientIdKeyring clientIds,
            ObjectProvider<RegionShares> regions, ObjectProvider<AbuseScores> abuse, RateLimitStore store) {
        return lookup(rules, clientIds, regions, abuse, store.find(UsageReader.class).orElse(probes -> Mono.error(
                new StoreNotConnectedException("the rate limiter's store (" + store.getClass().getSimpleName()
                        + ") cannot be read without spending"))));
    }

    static UsageLookup lookup(RuleSetHolder rules, ClientIdKeyring clientIds, ObjectProvider<RegionShares> regions,
            ObjectProvider<AbuseScores> abuse, UsageReader reader) {
        return new UsageLookup(rules, clientIds.current(), regions.getIfAvailable(), abuse.getIfAvailable(), reader,
                Clock.systemUTC());
    }
}

package dev.ratelimiter.autoconfigure.store;

import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisRateLimitStore;

/**
 * Redis as the limiter uses it, checked once at start-up ({@link LimiterConnectionConfiguration}).
 *
 * @param store the Redis bucket store
 * @param keys key names
 * @param cluster whether Redis is a cluster (scripts are split by slot)
 * @param auto whether {@code store.type} is auto: memory until Redis first answers
 */
public record RateLimitRedis(RedisRateLimitStore store, RedisKeys keys, boolean cluster, boolean auto) {
}

package dev.ratelimiter.autoconfigure;

import java.time.Duration;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisTokenBucketStore;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Runs one decision through Redis at start-up. It answers whether Redis is there (for
 * {@code ratelimit.store.type=auto}), and it opens the connection and loads the script before the first
 * request, which would otherwise pay for both and, under a 5 ms timeout, be decided locally.
 */
final class RedisWarmup {

    private static final BucketKey WARMUP = new BucketKey("warmup", "startup");
    private static final TokenBucketLimit LIMIT = TokenBucketLimit.builder("startup").capacity(1)
            .refill(1, Duration.ofMillis(1)).build();

    private RedisWarmup() {
    }

    /** Whether one decision went through Redis within {@code timeout}; the key it wrote is removed again. */
    static boolean succeeds(RedisTokenBucketStore store, ReactiveStringRedisTemplate redis, RedisKeys keys,
            Duration timeout) {
        try {
            store.tryConsume(WARMUP, LIMIT, 1).block(timeout);
            redis.delete(keys.bucket(WARMUP)).block(timeout);
            return true;
        }
        catch (RuntimeException unreachable) {
            return false;
        }
    }

    static String describe(ReactiveRedisConnectionFactory connectionFactory) {
        if (connectionFactory instanceof LettuceConnectionFactory lettuce) {
            return lettuce.getHostName() + ":" + lettuce.getPort();
        }
        return connectionFactory.getClass().getSimpleName();
    }
}

package dev.ratelimiter.autoconfigure;

import java.time.Duration;

import java.util.List;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisRateLimitStore;
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
    private static final Rule RULE = new Rule("startup", "startup", Match.ANY, List.of(Dimension.ROUTE),
            TokenBucketLimit.of("warmup.", 1, 1, Duration.ofMillis(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);

    private RedisWarmup() {
    }

    /** Whether one decision went through Redis within {@code timeout}; the key it wrote is removed again. */
    static boolean succeeds(RedisRateLimitStore store, ReactiveStringRedisTemplate redis, RedisKeys keys,
            Duration timeout) {
        try {
            store.evaluate(List.of(new Check(RULE, WARMUP, 1, false))).block(timeout);
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

package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Decision;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.TokenBucketLimit;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.publisher.Mono;

/**
 * Token buckets in Redis: one {@link TokenBucketScript} call per decision, one round trip, atomic.
 */
public final class RedisTokenBucketStore implements RateLimitStore {

    /** Extra lifetime of a bucket key beyond its time to fill, so a key is not dropped a moment too early. */
    static final long TTL_SLACK_MILLIS = 1_000;

    private final ReactiveStringRedisTemplate redis;
    private final RedisScript<List<Long>> script;
    private final RedisKeys keys;

    public RedisTokenBucketStore(ReactiveStringRedisTemplate redis, RedisScript<List<Long>> script, RedisKeys keys) {
        this.redis = redis;
        this.script = script;
        this.keys = keys;
    }

    @Override
    public Mono<Decision> tryConsume(BucketKey key, TokenBucketLimit limit, int cost) {
        List<String> arguments = List.of(String.valueOf(limit.capacity()), String.valueOf(limit.tokensPerSecond()),
                String.valueOf(cost), String.valueOf(TTL_SLACK_MILLIS));
        return redis.execute(script, List.of(keys.bucket(key)), arguments)
                .next()
                .map(reply -> toDecision(reply, limit));
    }

    private static Decision toDecision(List<Long> reply, TokenBucketLimit limit) {
        if (reply.size() != 4) {
            throw new IllegalStateException("token bucket script returned " + reply + ", expected 4 numbers");
        }
        return new Decision(reply.get(0) == 1L, limit, reply.get(1), Duration.ofNanos(reply.get(2) * 1_000),
                Duration.ofNanos(reply.get(3) * 1_000), Decision.Source.STORE);
    }
}

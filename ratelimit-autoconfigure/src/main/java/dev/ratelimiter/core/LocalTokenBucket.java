package dev.ratelimiter.core;

import java.time.Duration;

/**
 * One token bucket in this JVM's memory. Its whole state is a token count and the time it was last
 * refilled; the refill is arithmetic done on each call, so no timer runs per bucket. The same maths
 * runs in Redis as {@code META-INF/scripts/ratelimit/token_bucket.lua}.
 */
final class LocalTokenBucket {

    private double tokens;
    private long lastRefillNanos;
    private volatile long timeToFillNanos;

    LocalTokenBucket(TokenBucketLimit limit, long nowNanos) {
        this.tokens = limit.capacity();
        this.lastRefillNanos = nowNanos;
        this.timeToFillNanos = limit.timeToFill().toNanos();
    }

    synchronized Decision tryConsume(TokenBucketLimit limit, int cost, long nowNanos) {
        double perNano = limit.tokensPerSecond() / 1e9;
        long elapsed = Math.max(0, nowNanos - lastRefillNanos);
        tokens = Math.min(limit.capacity(), tokens + elapsed * perNano);
        lastRefillNanos = nowNanos;
        timeToFillNanos = limit.timeToFill().toNanos();
        boolean allowed = tokens >= cost;
        Duration retryAfter = Duration.ZERO;
        if (allowed) {
            tokens -= cost;
        }
        else {
            retryAfter = Duration.ofNanos((long) Math.ceil((cost - tokens) / perNano));
        }
        Duration resetAfter = Duration.ofNanos((long) Math.ceil((limit.capacity() - tokens) / perNano));
        return new Decision(allowed, limit, (long) Math.floor(tokens), retryAfter, resetAfter, Decision.Source.LOCAL);
    }

    /** How long this bucket may sit idle before forgetting it loses nothing: by then it is full anyway. */
    long timeToFillNanos() {
        return timeToFillNanos;
    }
}

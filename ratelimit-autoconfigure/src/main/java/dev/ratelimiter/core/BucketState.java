package dev.ratelimiter.core;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/**
 * One bucket in this JVM's memory. The arithmetic is the same as in {@code META-INF/scripts/ratelimit/rate_limit.lua},
 * which runs it inside Redis; the two are kept side by side deliberately so each can be read against the other.
 */
abstract sealed class BucketState {

    /** How long this bucket may sit idle before forgetting it changes no decision. */
    volatile long lifetimeNanos;

    /** Whether this state can count for {@code limit} (a rule may change algorithm at runtime). */
    abstract boolean fits(Limit limit);

    /** What the bucket would say to {@code cost} at {@code now}, without changing it. */
    abstract Preview preview(Limit limit, int cost, long nowNanos);

    /** What the bucket would say to {@code check} at {@code now}, without changing it. */
    Preview preview(Check check, long nowNanos) {
        return preview(check.rule().limit(), check.cost(), nowNanos);
    }

    /** Spends what {@link #preview} allowed. */
    abstract void commit(Preview preview);

    static BucketState create(Limit limit, long nowNanos) {
        BucketState state = limit instanceof TokenBucketLimit bucket ? new TokenBucket(bucket, nowNanos)
                : limit instanceof SlidingWindowLimit ? new SlidingWindow() : new Concurrency();
        state.lifetimeNanos = limit.stateLifetime().toNanos();
        return state;
    }

    /** A computed outcome plus the state to store if it is committed. */
    record Preview(boolean allowed, long remaining, Duration retryAfter, Duration resetAfter, double newValue,
            long stamp, double previous, String permit) {

        Preview(boolean allowed, long remaining, Duration retryAfter, Duration resetAfter, double newValue, long stamp,
                double previous) {
            this(allowed, remaining, retryAfter, resetAfter, newValue, stamp, previous, null);
        }
    }

    static final class TokenBucket extends BucketState {

        private double tokens;
        private long lastRefillNanos;

        @Override
        boolean fits(Limit limit) {
            return limit instanceof TokenBucketLimit;
        }

        TokenBucket(TokenBucketLimit limit, long nowNanos) {
            this.tokens = limit.capacity();
            this.lastRefillNanos = nowNanos;
        }

        @Override
        Preview preview(Limit limit, int cost, long nowNanos) {
            TokenBucketLimit bucket = (TokenBucketLimit) limit;
            double perNano = bucket.tokensPerSecond() / 1e9;
            double available = Math.min(bucket.capacity(), tokens + Math.max(0, nowNanos - lastRefillNanos) * perNano);
            boolean allowed = available >= cost;
            double after = allowed ? available - cost : available;
            Duration retry = allowed ? Duration.ZERO : Duration.ofNanos((long) Math.ceil((cost - available) / perNano));
            Duration reset = Duration.ofNanos((long) Math.ceil((bucket.capacity() - after) / perNano));
            return new Preview(allowed, (long) Math.floor(after), retry, reset, after, nowNanos, 0);
        }

        @Override
        void commit(Preview preview) {
            tokens = preview.newValue();
            lastRefillNanos = preview.stamp();
        }
    }

    static final class SlidingWindow extends BucketState {

        private long windowIndex = Long.MIN_VALUE;

        @Override
        boolean fits(Limit limit) {
            return limit instanceof SlidingWindowLimit;
        }
        private double current;
        private double previous;

        @Override
        Preview preview(Limit limit, int cost, long nowNanos) {
            SlidingWindowLimit window = (SlidingWindowLimit) limit;
            long length = window.window().toNanos();
            long index = Math.floorDiv(nowNanos, length);
            double cur = 0;
            double prev = 0;
            if (windowIndex == index) {
                cur = current;
                prev = previous;
            }
            else if (windowIndex == index - 1) {
                prev = current;
            }
            double elapsed = (double) (nowNanos - index * length) / length;
            double estimate = prev * (1 - elapsed) + cur;
            boolean allowed = estimate + cost <= window.limit();
            double spent = allowed ? cost : 0;
            long remaining = (long) Math.floor(window.limit() - estimate - spent);
            Duration retry = allowed ? Duration.ZERO : retryAfter(window.limit(), cost, cur, prev, elapsed, length);
            Duration reset = cur + spent > 0 ? Duration.ofNanos((long) ((2 - elapsed) * length))
                    : prev > 0 ? Duration.ofNanos((long) ((1 - elapsed) * length)) : Duration.ZERO;
            return new Preview(allowed, remaining, retry, reset, cur + spent, index, prev);
        }

        /** Time until the weighted estimate leaves room for {@code cost}, this window or the next. */
        private static Duration retryAfter(long limit, int cost, double cur, double prev, double elapsed, long length) {
            if (cur + cost <= limit && prev > 0) {
                double needed = 1 - (limit - cur - cost) / prev;
                return Duration.ofNanos((long) Math.ceil(Math.max(0, needed - elapsed) * length));
            }
            double nextNeeded = cur > 0 ? Math.max(0, 1 - (limit - cost) / cur) : 0;
            return Duration.ofNanos((long) Math.ceil((1 - elapsed + nextNeeded) * length));
        }

        @Override
        void commit(Preview preview) {
            windowIndex = preview.stamp();
            current = preview.newValue();
            previous = preview.previous();
        }
    }

    /**
     * Permits in progress, by id, so that giving one back is exact and idempotent. Held permits do not expire here:
     * they belong to requests of this JVM, which always give them back (leases guard against dead instances, which
     * cannot happen within one process).
     */
    static final class Concurrency extends BucketState {

        private final Set<String> permits = new HashSet<>();

        @Override
        boolean fits(Limit limit) {
            return limit instanceof ConcurrencyLimit;
        }

        @Override
        Preview preview(Limit limit, int cost, long nowNanos) {
            throw new UnsupportedOperationException("a concurrency check needs its permit id");
        }

        @Override
        Preview preview(Check check, long nowNanos) {
            long max = check.rule().limit().quota();
            boolean allowed = permits.contains(check.permit()) || permits.size() < max;
            long remaining = max - permits.size() - (allowed && !permits.contains(check.permit()) ? 1 : 0);
            return new Preview(allowed, remaining, allowed ? Duration.ZERO : ConcurrencyLimit.RETRY_HINT,
                    Duration.ZERO, 0, nowNanos, 0, check.permit());
        }

        @Override
        void commit(Preview preview) {
            permits.add(preview.permit());
        }

        /** Gives a permit back; false when it was not held. */
        boolean release(String permit) {
            return permits.remove(permit);
        }

        boolean holdsPermits() {
            return !permits.isEmpty();
        }

        int inProgress() {
            return permits.size();
        }
    }
}

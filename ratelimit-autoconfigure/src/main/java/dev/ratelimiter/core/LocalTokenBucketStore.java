package dev.ratelimiter.core;

import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import reactor.core.publisher.Mono;

/**
 * Token buckets held in this JVM: exact for one instance, and the fallback when the shared store cannot
 * answer in time.
 *
 * <p>Memory is bounded twice over: a bucket idle for longer than its time-to-fill is evicted (it would be
 * full again, so forgetting it changes no decision), and at most {@code maxKeys} buckets are kept, the
 * least useful evicted first. Only the second bound can lose state, and then only in the client's favour.
 */
public final class LocalTokenBucketStore implements RateLimitStore {

    private final Cache<BucketKey, LocalTokenBucket> buckets;
    private final LongSupplier nanoClock;

    public LocalTokenBucketStore(long maxKeys, LongSupplier nanoClock) {
        if (maxKeys < 1) {
            throw new IllegalArgumentException("maxKeys must be at least 1, but was " + maxKeys);
        }
        this.nanoClock = nanoClock;
        this.buckets = Caffeine.newBuilder()
                .maximumSize(maxKeys)
                .ticker(nanoClock::getAsLong)
                .expireAfter(new IdleUntilFull())
                .build();
    }

    public LocalTokenBucketStore(long maxKeys) {
        this(maxKeys, System::nanoTime);
    }

    @Override
    public Mono<Decision> tryConsume(BucketKey key, TokenBucketLimit limit, int cost) {
        return Mono.fromSupplier(() -> consume(key, limit, cost));
    }

    /** The same as {@link #tryConsume} without the reactive wrapper; it never blocks. */
    public Decision consume(BucketKey key, TokenBucketLimit limit, int cost) {
        long now = nanoClock.getAsLong();
        LocalTokenBucket bucket = buckets.get(key, k -> new LocalTokenBucket(limit, now));
        return bucket.tryConsume(limit, cost, now);
    }

    /** Number of buckets currently held (approximate while evictions are pending). */
    public long size() {
        buckets.cleanUp();
        return buckets.estimatedSize();
    }

    private static final class IdleUntilFull implements Expiry<BucketKey, LocalTokenBucket> {

        @Override
        public long expireAfterCreate(BucketKey key, LocalTokenBucket bucket, long currentTime) {
            return bucket.timeToFillNanos();
        }

        @Override
        public long expireAfterUpdate(BucketKey key, LocalTokenBucket bucket, long currentTime, long currentDuration) {
            return bucket.timeToFillNanos();
        }

        @Override
        public long expireAfterRead(BucketKey key, LocalTokenBucket bucket, long currentTime, long currentDuration) {
            return bucket.timeToFillNanos();
        }
    }
}

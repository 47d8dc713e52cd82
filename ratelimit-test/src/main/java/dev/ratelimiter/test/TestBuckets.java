package dev.ratelimiter.test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.ratelimiter.core.BucketReading;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.UsageProbe;
import dev.ratelimiter.core.UsageReader;
import dev.ratelimiter.core.Verdict;
import reactor.core.publisher.Mono;

/**
 * The limiter's buckets in a test: the in-memory store the limiter uses without Redis, on a clock that stands still
 * until the test moves it, so "429 after N" holds exactly (no token refills while the requests are sent).
 * {@link #reset()} empties every bucket; {@link #advance(Duration)} lets time pass for the refills.
 *
 * <p>Thread-safe: the gateway evaluates on its event loops while the test thread resets or advances.
 */
public final class TestBuckets implements RateLimitStore, UsageReader {

    /** As {@code ratelimit.store.local-max-keys} defaults: far more than a test uses. */
    static final long MAX_KEYS = 100_000;

    private final AtomicLong nanos = new AtomicLong(System.nanoTime());
    private final AtomicReference<LocalBucketStore> buckets = new AtomicReference<>(fresh());

    @Override
    public Mono<Verdict> evaluate(List<Check> checks) {
        return buckets.get().evaluate(checks);
    }

    /** The usage API's reading of the buckets in use now (after a {@link #reset}, the fresh ones). */
    @Override
    public Mono<List<BucketReading>> read(List<UsageProbe> probes) {
        return buckets.get().read(probes);
    }

    /** Every bucket full again, as at start-up; permits of requests still in progress no longer count. */
    public void reset() {
        buckets.set(fresh());
    }

    /** Moves the buckets' clock on: tokens refill and windows slide as if this much time had passed. */
    public void advance(Duration time) {
        if (time.isNegative()) {
            throw new IllegalArgumentException("time only moves forward, but advance was given " + time);
        }
        nanos.addAndGet(time.toNanos());
    }

    @Override
    public <T> Optional<T> find(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : buckets.get().find(type);
    }

    private LocalBucketStore fresh() {
        return new LocalBucketStore(MAX_KEYS, nanos::get);
    }
}

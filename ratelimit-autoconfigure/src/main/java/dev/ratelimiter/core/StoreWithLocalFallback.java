package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Asks the shared store, but never waits for it longer than {@code timeout} and never retries: when the
 * store is slow or failing, the decision is made from this instance's own buckets instead. A limiter that
 * waits politely on a sick store turns a storage problem into a gateway outage; one that decides locally
 * stays approximately right and fully available.
 */
public final class StoreWithLocalFallback implements RateLimitStore {

    private static final Logger logger = LoggerFactory.getLogger(StoreWithLocalFallback.class);
    private static final long WARN_EVERY_NANOS = Duration.ofSeconds(30).toNanos();

    private final RateLimitStore store;
    private final LocalBucketStore fallback;
    private final Duration timeout;
    private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private final AtomicLong fallbackDecisions = new AtomicLong();

    public StoreWithLocalFallback(RateLimitStore store, LocalBucketStore fallback, Duration timeout) {
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("store timeout must be positive, but was " + timeout);
        }
        this.store = store;
        this.fallback = fallback;
        this.timeout = timeout;
    }

    @Override
    public Mono<Verdict> evaluate(List<Check> checks) {
        return Mono.defer(() -> store.evaluate(checks))
                .timeout(timeout)
                .onErrorResume(failure -> {
                    fallbackDecisions.incrementAndGet();
                    warnOccasionally(failure);
                    return Mono.fromSupplier(() -> fallback.evaluateNow(checks));
                });
    }

    /** Decisions made locally because the store failed or was too slow, since start. */
    public long fallbackDecisions() {
        return fallbackDecisions.get();
    }

    private void warnOccasionally(Throwable failure) {
        long now = System.nanoTime();
        long last = lastWarning.get();
        if (now - last >= WARN_EVERY_NANOS && lastWarning.compareAndSet(last, now)) {
            String reason = failure instanceof TimeoutException ? "no answer within " + timeout : failure.toString();
            logger.warn("Rate-limit store unavailable ({}); deciding from this instance's memory until it answers "
                    + "again ({} local decisions so far)", reason, fallbackDecisions.get());
        }
    }
}

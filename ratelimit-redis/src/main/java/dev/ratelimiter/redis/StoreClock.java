package dev.ratelimiter.redis;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Redis's clock as seen from this JVM: the offset between its {@code TIME} (as the rate-limit script read it) and
 * {@link System#nanoTime}, so that a call can tell Redis when it goes stale in Redis's own time.
 *
 * <p>Each reading is Redis's time when the script ran minus this JVM's time when the reply was read, so it is never
 * more than the true offset (by the reply's way back); the estimate is the largest reading of the last two
 * {@value #WINDOW_SECONDS}-second windows. After Redis's clock steps forward (a failover to a server ahead) the next
 * reading raises it at once; after a step back the old, larger offset holds for up to two windows, which only makes
 * calls go stale later — never too early.
 */
final class StoreClock {

    static final long WINDOW_SECONDS = 10;
    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(WINDOW_SECONDS);
    private static final long NONE = Long.MIN_VALUE;

    private final AtomicLong current = new AtomicLong(NONE);
    private final AtomicLong previous = new AtomicLong(NONE);
    private final AtomicLong windowEnds = new AtomicLong(System.nanoTime() + WINDOW_NANOS);

    /** A reply read now that says Redis's time was {@code storeMicros} when its script ran. */
    void read(long storeMicros, long localNanos) {
        long ends = windowEnds.get();
        if (localNanos - ends > 0 && windowEnds.compareAndSet(ends, localNanos + WINDOW_NANOS)) {
            previous.set(current.getAndSet(NONE));
        }
        long reading = storeMicros - localNanos / 1000;
        current.accumulateAndGet(reading, Math::max);
    }

    /** Redis's time at {@code localNanos} as last seen, in microseconds; {@code fallback} until Redis has answered. */
    long now(long localNanos, long fallback) {
        long offset = Math.max(current.get(), previous.get());
        return offset == NONE ? fallback : localNanos / 1000 + offset;
    }

    /**
     * Redis's time {@code maxAgeNanos} after {@code localNanos}, in microseconds; 0 (never stale) until Redis has
     * answered once.
     */
    long staleAfter(long localNanos, long maxAgeNanos) {
        long offset = Math.max(current.get(), previous.get());
        return offset == NONE ? 0 : (localNanos + maxAgeNanos) / 1000 + offset;
    }
}

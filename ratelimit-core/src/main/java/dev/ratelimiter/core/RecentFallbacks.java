package dev.ratelimiter.core;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * How many of the last minute's decisions were made without the shared store, and why the last one was: what an
 * operator needs to see at once that exact mode is not exact right now. Counted with two adders; a snapshot of both is
 * taken every {@value #SLICE_SECONDS} s by whichever decision passes the slice's end, so the minute is read as the
 * difference between now and the snapshot of about a minute ago, without a timer of its own.
 */
public final class RecentFallbacks {

    static final int SLICE_SECONDS = 5;
    private static final int SLICES = 60 / SLICE_SECONDS + 1;
    private static final long SLICE_NANOS = SLICE_SECONDS * 1_000_000_000L;

    private final LongSupplier nanoClock;
    private final LongAdder decisions = new LongAdder();
    private final LongAdder fallbacks = new LongAdder();
    /** Per slice: its index (in slices since the clock's origin), decisions and fallbacks as counted at its start. */
    private final AtomicLongArray sliceIndex = new AtomicLongArray(SLICES);
    private final AtomicLongArray sliceDecisions = new AtomicLongArray(SLICES);
    private final AtomicLongArray sliceFallbacks = new AtomicLongArray(SLICES);
    private final AtomicLong currentSlice = new AtomicLong(Long.MIN_VALUE);
    private volatile FallbackReason lastReason;
    private volatile long lastFallbackNanos;

    public RecentFallbacks(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        for (int i = 0; i < SLICES; i++) {
            sliceIndex.set(i, Long.MIN_VALUE);
        }
    }

    /** One decision, from the store ({@code reason} null) or without it. */
    public void record(FallbackReason reason) {
        long now = nanoClock.getAsLong();
        long slice = Math.floorDiv(now, SLICE_NANOS);
        long seen = currentSlice.get();
        if (slice != seen && currentSlice.compareAndSet(seen, slice)) {
            int at = (int) Math.floorMod(slice, (long) SLICES);
            sliceDecisions.set(at, decisions.sum());
            sliceFallbacks.set(at, fallbacks.sum());
            sliceIndex.set(at, slice);
        }
        decisions.increment();
        if (reason != null) {
            fallbacks.increment();
            lastReason = reason;
            lastFallbackNanos = now;
        }
    }

    /** What the last minute (at least, up to {@value #SLICE_SECONDS} s more) looked like. */
    public Window lastMinute() {
        long now = nanoClock.getAsLong();
        long slice = Math.floorDiv(now, SLICE_NANOS);
        long totalDecisions = decisions.sum();
        long totalFallbacks = fallbacks.sum();
        // The oldest snapshot no older than a minute and a slice. None: nothing was decided in that time (the first
        // decision of a slice takes one), so everything counted is older.
        long fromDecisions = totalDecisions;
        long fromFallbacks = totalFallbacks;
        long oldest = Long.MAX_VALUE;
        for (int i = 0; i < SLICES; i++) {
            long index = sliceIndex.get(i);
            if (index != Long.MIN_VALUE && index >= slice - (SLICES - 1) && index < oldest) {
                oldest = index;
                fromDecisions = sliceDecisions.get(i);
                fromFallbacks = sliceFallbacks.get(i);
            }
        }
        FallbackReason reason = lastReason;
        long sinceLast = reason == null ? -1 : now - lastFallbackNanos;
        return new Window(totalDecisions - fromDecisions, totalFallbacks - fromFallbacks, reason, sinceLast);
    }

    /**
     * @param decisions decisions in the window
     * @param fallbacks of which made without the store
     * @param lastReason why the last decision without the store was (ever), or null: none yet
     * @param nanosSinceLast how long ago that was; -1: never
     */
    public record Window(long decisions, long fallbacks, FallbackReason lastReason, long nanosSinceLast) {

        /** Share of the decisions made without the store, 0 to 1 (0 with no decisions). */
        public double share() {
            return decisions == 0 ? 0 : (double) Math.min(fallbacks, decisions) / decisions;
        }
    }
}

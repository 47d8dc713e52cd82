package dev.ratelimiter.core;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

import com.netflix.concurrency.limits.Limit;

/**
 * Sheds load in front of one upstream, lowest priority first. It counts the requests this instance has in progress
 * there against the upstream's limit — fixed, or learnt from latency by Netflix's {@code concurrency-limits}
 * algorithms — and, once utilisation passes the target, refuses:
 * <ul>
 * <li>background work with a probability rising from 0 at the target to 1 a third of the way to the limit;</li>
 * <li>normal work likewise over the next third;</li>
 * <li>user-facing (critical) work only when the upstream is at its limit.</li>
 * </ul>
 *
 * <p>A request in progress cannot be taken back, so a lower priority must not take the room a higher one is about to
 * need: the utilisation a priority is judged by counts, for every higher priority, the most it recently had in
 * progress (a peak that decays with a {@value #PEAK_DECAY_SECONDS}-second time constant) rather than what it has at
 * this instant. Background work therefore gives way to user-facing traffic as that traffic grows, and is fully shed
 * before user-facing requests are refused.
 *
 * <p>Shedding and recovery are gradual, not flapping: a small rise in utilisation sheds a small share of one class,
 * and the share falls back the same way — and no faster than the peaks decay — as load eases.
 */
public final class LoadShedder {

    private final String upstream;
    private final Limit limit;
    private final double target;
    private final DoubleSupplier random;
    private final LongSupplier nanoClock;
    static final int PEAK_DECAY_SECONDS = 10;

    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger[] inFlightByPriority = { new AtomicInteger(), new AtomicInteger(), new AtomicInteger() };
    /** Decaying peaks of in-progress requests above each priority: [critical] and [critical + normal]. */
    private final double[] peaks = new double[2];
    private long peaksAtNanos;
    private final Map<Priority, AtomicLong> shed = new EnumMap<>(Priority.class);

    /**
     * @param upstream name, for metrics and messages
     * @param limit requests the upstream may have in progress from this instance
     * @param target utilisation (0..1, exclusive) past which shedding starts
     * @param random uniform in [0, 1)
     * @param nanoClock for the latency samples an adaptive limit learns from
     */
    public LoadShedder(String upstream, Limit limit, double target, DoubleSupplier random, LongSupplier nanoClock) {
        if (!(target > 0 && target < 1)) {
            throw new IllegalArgumentException("target utilisation must be between 0 and 1, but was " + target);
        }
        this.upstream = upstream;
        this.limit = limit;
        this.target = target;
        this.random = random;
        this.nanoClock = nanoClock;
        this.peaksAtNanos = nanoClock.getAsLong();
        for (Priority priority : Priority.values()) {
            shed.put(priority, new AtomicLong());
        }
    }

    /** A ticket for a request allowed through, or {@code null} when it is shed. */
    public Ticket tryAcquire(Priority priority) {
        int current = limit.getLimit();
        double reserved = reservedAbove(priority);
        while (true) {
            int before = inFlight.get();
            if (random.getAsDouble() < shedProbability(priority, before + reserved, current)) {
                recordShed(priority);
                return null;
            }
            // At or past the limit the probability above is 1, so a request admitted here always fits.
            if (inFlight.compareAndSet(before, before + 1)) {
                inFlightByPriority[priority.ordinal()].incrementAndGet();
                updatePeaks();
                return new Ticket(priority, nanoClock.getAsLong(), before + 1);
            }
        }
    }

    /**
     * Counts a shed request. One above background was demand that did not fit: it raises the peaks the lower
     * priorities are judged by, so that they make room sooner.
     */
    private void recordShed(Priority priority) {
        shed.get(priority).incrementAndGet();
        if (priority != Priority.BACKGROUND) {
            synchronized (peaks) {
                decayPeaks();
                if (priority == Priority.CRITICAL) {
                    peaks[0] = Math.max(peaks[0], above(Priority.NORMAL) + 1);
                }
                peaks[1] = Math.max(peaks[1], above(Priority.BACKGROUND) + 1);
            }
        }
    }

    /** Room the priorities above {@code priority} recently used but are not using right now. */
    private double reservedAbove(Priority priority) {
        if (priority == Priority.CRITICAL) {
            return 0;
        }
        synchronized (peaks) {
            decayPeaks();
            int index = priority == Priority.NORMAL ? 0 : 1;
            return Math.max(0, peaks[index] - above(priority));
        }
    }

    private int above(Priority priority) {
        int critical = inFlightByPriority[Priority.CRITICAL.ordinal()].get();
        return priority == Priority.NORMAL ? critical
                : critical + inFlightByPriority[Priority.NORMAL.ordinal()].get();
    }

    private void updatePeaks() {
        synchronized (peaks) {
            decayPeaks();
            peaks[0] = Math.max(peaks[0], above(Priority.NORMAL));
            peaks[1] = Math.max(peaks[1], above(Priority.BACKGROUND));
        }
    }

    /** Called holding the peaks' monitor. */
    private void decayPeaks() {
        long now = nanoClock.getAsLong();
        double factor = Math.exp(-(now - peaksAtNanos) / (PEAK_DECAY_SECONDS * 1e9));
        peaksAtNanos = now;
        peaks[0] *= factor;
        peaks[1] *= factor;
    }

    /** The share of {@code priority} requests shed with {@code inFlight} of {@code limit} in progress. */
    double shedProbability(Priority priority, double inFlight, int limit) {
        if (inFlight >= limit) {
            return 1;
        }
        if (priority == Priority.CRITICAL) {
            return 0;
        }
        double utilisation = inFlight / limit;
        double band = (1 - target) / 3;
        double start = priority == Priority.BACKGROUND ? target : target + band;
        double share = (utilisation - start) / band;
        // Rounded so that the end of a band sheds everything, whatever the floating-point error.
        return share >= 1 - 1e-9 ? 1 : Math.max(0, share);
    }

    public String upstream() {
        return upstream;
    }

    /** Requests this instance has in progress at the upstream. */
    public int inFlight() {
        return inFlight.get();
    }

    /** The upstream's current limit (fixed, or as last learnt). */
    public int limit() {
        return limit.getLimit();
    }

    /** Requests of {@code priority} shed since start. */
    public long shed(Priority priority) {
        return shed.get(priority).get();
    }

    /** One request let through; {@link #release} it exactly once when it ends. */
    public final class Ticket {

        private final Priority priority;
        private final long startNanos;
        private final int inFlightAtStart;
        private final AtomicInteger released = new AtomicInteger();

        private Ticket(Priority priority, long startNanos, int inFlightAtStart) {
            this.priority = priority;
            this.startNanos = startNanos;
            this.inFlightAtStart = inFlightAtStart;
        }

        /**
         * The request ended. {@code overloaded}: the upstream answered as an overloaded server does (503, 504, a
         * timeout), which an adaptive limit takes as a drop; {@code sample}: whether its latency says anything
         * about the upstream (not when the client cancelled).
         */
        public void release(boolean overloaded, boolean sample) {
            if (released.compareAndSet(0, 1)) {
                inFlight.decrementAndGet();
                inFlightByPriority[priority.ordinal()].decrementAndGet();
                if (sample) {
                    limit.onSample(startNanos, nanoClock.getAsLong() - startNanos, inFlightAtStart, overloaded);
                }
            }
        }
    }
}

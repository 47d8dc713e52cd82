package dev.ratelimiter.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The circuit breaker in front of the store: count-based, with resilience4j's semantics and settings, and lock-free.
 *
 * <p>It is consulted by every decision on a Netty event loop, where a lock would make one event loop wait for
 * another. resilience4j's breaker records each call under a lock (and publishes an event per call to consumers that
 * take another), so it is not used on the request path; this one records an outcome with a few atomic operations and
 * changes state by compare-and-set.
 *
 * <ul>
 * <li>Closed: the last {@code slidingWindowSize} outcomes are kept; once at least {@code minimumNumberOfCalls} are,
 * a failure rate at or above {@code failureRateThreshold} % opens it.</li>
 * <li>Open: no call is let through for {@code waitInOpenState}; then the next caller turns it half open.</li>
 * <li>Half open: {@code callsInHalfOpenState} trial calls; when all have ended, their failure rate closes or reopens
 * it. A trial cancelled before its outcome gives its place back.</li>
 * </ul>
 */
public final class StoreBreaker {

    private static final Logger logger = LoggerFactory.getLogger(StoreBreaker.class);

    /** Where the breaker stands. */
    public enum State {
        CLOSED, OPEN, HALF_OPEN
    }

    /**
     * @param slidingWindowSize outcomes the failure rate is computed over
     * @param minimumNumberOfCalls outcomes needed before the rate can open the breaker
     * @param failureRateThreshold failure rate, in percent, that opens it
     * @param waitInOpenState how long it stays open before trial calls
     * @param callsInHalfOpenState trial calls let through when half open
     */
    public record Settings(int slidingWindowSize, int minimumNumberOfCalls, float failureRateThreshold,
            Duration waitInOpenState, int callsInHalfOpenState) {

        /** Opens at half of the last 20 calls (at least 10) failing; three trials after a second. */
        public static final Settings DEFAULTS = new Settings(20, 10, 50, Duration.ofSeconds(1), 3);

        public Settings {
            if (slidingWindowSize < 1 || minimumNumberOfCalls < 1 || callsInHalfOpenState < 1) {
                throw new IllegalArgumentException("the breaker's window, minimum calls and trial calls must be at "
                        + "least 1");
            }
            if (!(failureRateThreshold > 0 && failureRateThreshold <= 100)) {
                throw new IllegalArgumentException("the breaker's failure rate threshold must be in (0, 100], but was "
                        + failureRateThreshold);
            }
            if (waitInOpenState == null || waitInOpenState.isNegative() || waitInOpenState.isZero()) {
                throw new IllegalArgumentException("the breaker's wait in the open state must be positive");
            }
            minimumNumberOfCalls = Math.min(minimumNumberOfCalls, slidingWindowSize);
        }
    }

    private final String name;
    private final Settings settings;
    private final LongSupplier nanoClock;
    private final AtomicReference<Phase> phase;

    public StoreBreaker(String name, Settings settings, LongSupplier nanoClock) {
        this.name = name;
        this.settings = settings;
        this.nanoClock = nanoClock;
        this.phase = new AtomicReference<>(new Closed(settings.slidingWindowSize()));
    }

    public StoreBreaker(String name, Settings settings) {
        this(name, settings, System::nanoTime);
    }

    public String name() {
        return name;
    }

    public Settings settings() {
        return settings;
    }

    public State state() {
        return phase.get().state();
    }

    /** Whether a call may go to the store now; a true answer must be followed by an outcome or a release. */
    public boolean tryAcquirePermission() {
        Phase current = phase.get();
        if (current instanceof Closed) {
            return true;
        }
        if (current instanceof HalfOpen trial) {
            return trial.acquire();
        }
        Open open = (Open) current;
        if (nanoClock.getAsLong() - open.sinceNanos < settings.waitInOpenState().toNanos()) {
            return false;
        }
        HalfOpen trial = new HalfOpen(settings.callsInHalfOpenState());
        if (phase.compareAndSet(open, trial)) {
            logger.debug("Circuit breaker {} is half open: {} trial calls", name, settings.callsInHalfOpenState());
        }
        return tryAcquirePermission();
    }

    /** A permitted call ended without an outcome (its caller went away). */
    public void releasePermission() {
        if (phase.get() instanceof HalfOpen trial) {
            trial.release();
        }
    }

    public void onSuccess() {
        record(false);
    }

    public void onError() {
        record(true);
    }

    /** Opens the breaker now, for as long as it would after failures (tests, and operators through code). */
    public void open() {
        phase.set(new Open(nanoClock.getAsLong()));
    }

    /** Closes the breaker now, with an empty window. */
    public void close() {
        phase.set(new Closed(settings.slidingWindowSize()));
    }

    private void record(boolean failure) {
        Phase current = phase.get();
        if (current instanceof Closed closed) {
            if (closed.record(failure, settings)) {
                transition(current, new Open(nanoClock.getAsLong()), "open: failure rate at or above "
                        + settings.failureRateThreshold() + " % of the last " + settings.slidingWindowSize() + " calls");
            }
        }
        else if (current instanceof HalfOpen trial) {
            Boolean reopen = trial.record(failure, settings);
            if (reopen != null) {
                transition(current, reopen ? new Open(nanoClock.getAsLong()) : new Closed(settings.slidingWindowSize()),
                        reopen ? "open again: the trial calls failed" : "closed: the trial calls succeeded");
            }
        }
        // Open: an outcome of a call permitted before it opened changes nothing.
    }

    private void transition(Phase from, Phase to, String why) {
        if (phase.compareAndSet(from, to)) {
            logger.debug("Circuit breaker {} is {}", name, why);
        }
    }

    private sealed interface Phase permits Closed, Open, HalfOpen {

        State state();
    }

    /** The last outcomes in a ring: 0 none yet, 1 success, 2 failure; counts kept beside it. */
    private static final class Closed implements Phase {

        private final AtomicIntegerArray ring;
        private final AtomicLong next = new AtomicLong();
        private final AtomicInteger recorded = new AtomicInteger();
        private final AtomicInteger failures = new AtomicInteger();

        Closed(int size) {
            this.ring = new AtomicIntegerArray(size);
        }

        /** Records one outcome; whether the failure rate now says open. */
        boolean record(boolean failure, Settings settings) {
            int slot = (int) (next.getAndIncrement() % ring.length());
            int previous = ring.getAndSet(slot, failure ? 2 : 1);
            if (previous == 0) {
                recorded.incrementAndGet();
            }
            int delta = (failure ? 1 : 0) - (previous == 2 ? 1 : 0);
            int failed = delta == 0 ? failures.get() : failures.addAndGet(delta);
            int calls = recorded.get();
            return calls >= settings.minimumNumberOfCalls() && failed * 100f >= settings.failureRateThreshold() * calls;
        }

        @Override
        public State state() {
            return State.CLOSED;
        }
    }

    private record Open(long sinceNanos) implements Phase {

        @Override
        public State state() {
            return State.OPEN;
        }
    }

    private static final class HalfOpen implements Phase {

        private final AtomicInteger permits;
        private final AtomicInteger outcomes = new AtomicInteger();
        private final AtomicInteger failures = new AtomicInteger();
        private final int trials;

        HalfOpen(int trials) {
            this.trials = trials;
            this.permits = new AtomicInteger(trials);
        }

        boolean acquire() {
            for (int left = permits.get(); left > 0; left = permits.get()) {
                if (permits.compareAndSet(left, left - 1)) {
                    return true;
                }
            }
            return false;
        }

        void release() {
            permits.incrementAndGet();
        }

        /** Records a trial's outcome; once every trial has one: whether to reopen, else null. */
        Boolean record(boolean failure, Settings settings) {
            int failed = failure ? failures.incrementAndGet() : failures.get();
            if (outcomes.incrementAndGet() < trials) {
                return null;
            }
            return failed * 100f >= settings.failureRateThreshold() * trials;
        }

        @Override
        public State state() {
            return State.HALF_OPEN;
        }
    }
}

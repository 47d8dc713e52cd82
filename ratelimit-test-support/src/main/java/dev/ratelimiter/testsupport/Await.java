package dev.ratelimiter.testsupport;

import java.time.Duration;

/**
 * Bounded polling for the topology fixtures: a state that is never reached fails with what was last seen,
 * instead of hanging the build.
 */
final class Await {

    /** Thrown by a probe to say "not yet", with what it saw, for the timeout message. */
    static final class NotYet extends RuntimeException {

        NotYet(String observation) {
            super(observation, null, false, false);
        }
    }

    /** One look at the servers: returns the awaited value, or throws (NotYet or any failure) to look again. */
    @FunctionalInterface
    interface Probe<T> {
        T check() throws Exception;
    }

    private static final long POLL_MILLIS = 50;

    private Await() {
    }

    static <T> T until(Duration max, String what, Probe<T> probe) {
        long deadline = System.nanoTime() + max.toNanos();
        Exception last;
        do {
            try {
                T value = probe.check();
                if (value != null) {
                    return value;
                }
                last = new NotYet("probe returned nothing");
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting until " + what, ex);
            }
            catch (Exception ex) {
                // A node that is down, or refuses a command while the topology settles, is part of waiting.
                last = ex;
            }
            sleep(POLL_MILLIS);
        }
        while (System.nanoTime() < deadline);
        String seen = last instanceof NotYet ? last.getMessage() : String.valueOf(last);
        throw new IllegalStateException("Timed out after " + max.toMillis() + " ms waiting until " + what
                + "; last seen: " + seen, last instanceof NotYet ? null : last);
    }

    /** Throws {@link NotYet} with {@code observation} unless {@code condition} holds. */
    static void check(boolean condition, String observation) {
        if (!condition) {
            throw new NotYet(observation);
        }
    }

    /** Sleeps between two looks; an interrupt ends the wait with an exception, the interrupt flag kept. */
    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting", ex);
        }
    }
}

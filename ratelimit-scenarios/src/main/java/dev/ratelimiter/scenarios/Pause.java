package dev.ratelimiter.scenarios;

/** The scenarios' waits: for a while, or until a moment of a run. An interrupt ends the run. */
final class Pause {

    private Pause() {
    }

    static void millis(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** Until {@code seconds} after {@code startNanos} ({@link System#nanoTime()}); at once if that has passed. */
    static void until(long startNanos, double seconds) {
        long wait = (long) ((startNanos + (long) (seconds * 1e9) - System.nanoTime()) / 1e6);
        if (wait > 0) {
            millis(wait);
        }
    }
}

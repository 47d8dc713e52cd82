package dev.ratelimiter.scenarios;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Starting something that owns processes, servers or brokers: when one of them fails to start, what already
 * started is closed before the failure goes on, since a process left running outlives the run.
 */
final class Startup {

    /** The start-up itself; returns what the owner keeps of it (its start-up time, say). */
    @FunctionalInterface
    interface Steps<T> {
        T run() throws IOException;
    }

    private Startup() {
    }

    /** Runs {@code steps}; if they fail, runs {@code close} and rethrows (an I/O failure as unchecked). */
    static <T> T orClose(Runnable close, Steps<T> steps) {
        try {
            return steps.run();
        }
        catch (IOException ex) {
            close.run();
            throw new UncheckedIOException(ex);
        }
        catch (RuntimeException ex) {
            close.run();
            throw ex;
        }
    }
}

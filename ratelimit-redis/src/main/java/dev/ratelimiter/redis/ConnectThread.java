package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The one daemon thread ({@code ratelimit-redis-connect}) that opens the limiter's connections to Redis, so that no
 * request thread ever waits on a connect. A failed attempt is tried again after a back-off that doubles from
 * {@value #FIRST_RETRY_MILLIS} ms up to a cap; nothing is tried while the connection is {@code halted} (closed or
 * suspended).
 */
final class ConnectThread {

    private static final long FIRST_RETRY_MILLIS = 10;

    private final ScheduledExecutorService executor;
    private final Duration maxRetryDelay;
    private final BooleanSupplier halted;

    /** @param maxRetryDelay the longest pause between two attempts; zero or negative means one second */
    ConnectThread(Duration maxRetryDelay, BooleanSupplier halted) {
        this.maxRetryDelay = maxRetryDelay.isZero() || maxRetryDelay.isNegative() ? Duration.ofSeconds(1)
                : maxRetryDelay;
        this.halted = halted;
        this.executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "ratelimit-redis-connect");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Runs {@code task} on the connect thread, soon; does nothing once stopped. */
    void submit(Runnable task) {
        try {
            executor.execute(task);
        }
        catch (RuntimeException shutDown) {
            // stopped
        }
    }

    /** Runs {@code task} again after the back-off of its {@code attempt}-th failure. */
    void retry(Runnable task, int attempt) {
        if (halted.getAsBoolean()) {
            return;
        }
        long delay = Math.min(maxRetryDelay.toMillis(), FIRST_RETRY_MILLIS << Math.min(attempt, 20));
        try {
            executor.schedule(task, delay, TimeUnit.MILLISECONDS);
        }
        catch (RuntimeException shutDown) {
            // stopped meanwhile
        }
    }

    void stop() {
        executor.shutdownNow();
    }
}

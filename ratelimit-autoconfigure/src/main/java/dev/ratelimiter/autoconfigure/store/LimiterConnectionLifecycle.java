package dev.ratelimiter.autoconfigure.store;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimiter.redis.LimiterConnection;
import org.springframework.context.SmartLifecycle;

/**
 * Closes the limiter's own Redis connection before the application's {@code LettuceConnectionFactory} (phase 0) shuts
 * its Lettuce client down, and opens it again when the context starts again (a paused test context, a restart).
 *
 * <p>Without it the client's shutdown would close our connection under us, possibly while our background connector
 * was opening a new one on that client: Lettuce then waits for ever for the half-open connection to close, and the
 * application never finishes stopping. Stopped after the web server (which stops taking requests first), so no
 * request is still deciding.
 */
public final class LimiterConnectionLifecycle implements SmartLifecycle {

    /** Above {@code LettuceConnectionFactory}'s phase 0 (stopped later), below the web server's (stopped earlier). */
    public static final int PHASE = 1_000;

    private static final Duration STOP_WAIT = Duration.ofSeconds(3);

    private final LimiterConnection connection;
    private volatile boolean running;
    private volatile boolean stopped;

    LimiterConnectionLifecycle(LimiterConnection connection) {
        this.connection = connection;
    }

    @Override
    public void start() {
        connection.start();
        running = true;
        if (stopped) {
            // Started again: give the connection a moment to open, so that the rule sync starting next (a higher
            // phase) reads the store instead of reporting it unreachable. The first start needs no wait: the
            // start-up probe has already opened the connection, or said why not.
            long deadline = System.nanoTime() + STOP_WAIT.toNanos();
            while (!connection.connected() && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
        }
    }

    @Override
    public void stop() {
        running = false;
        stopped = true;
        connection.suspend(STOP_WAIT);
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}

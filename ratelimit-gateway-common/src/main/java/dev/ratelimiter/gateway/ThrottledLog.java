package dev.ratelimiter.gateway;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.slf4j.Logger;

/**
 * Something that may happen on every request (a limiter bug, a stuck store) said at ERROR at most once a minute, every
 * other case at DEBUG: it must be seen, and it must not flood the log at request rate.
 */
public final class ThrottledLog {

    private static final long EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final Logger logger;
    private final LongSupplier nanoTime;
    private final AtomicLong next;

    public ThrottledLog(Logger logger) {
        this(logger, System::nanoTime);
    }

    ThrottledLog(Logger logger, LongSupplier nanoTime) {
        this.logger = logger;
        this.nanoTime = nanoTime;
        this.next = new AtomicLong(nanoTime.getAsLong());
    }

    /** A last argument that is a {@link Throwable} is logged as the cause, as SLF4J does. */
    public void error(String message, Object... arguments) {
        long now = nanoTime.getAsLong();
        long due = next.get();
        if (now - due >= 0 && next.compareAndSet(due, now + EVERY_NANOS)) {
            logger.error(message + " (said at most once a minute; the others at DEBUG)", arguments);
        }
        else {
            logger.debug(message, arguments);
        }
    }
}

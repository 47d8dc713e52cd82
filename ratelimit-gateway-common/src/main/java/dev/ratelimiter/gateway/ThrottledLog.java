package dev.ratelimiter.gateway;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.slf4j.Logger;

/**
 * Something that may happen on every request (a limiter bug, a stuck store) said at ERROR or WARN at most once a
 * minute, every other case at DEBUG: it must be seen, and it must not flood the log at request rate.
 */
public final class ThrottledLog {

    private static final long EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
    private static final String SAID = " (said at most once a minute; the others at DEBUG)";

    private final Logger logger;
    private final LongSupplier nanoTime;
    private final AtomicLong next;

    public ThrottledLog(Logger logger) {
        this(logger, System::nanoTime);
    }

    /** @param nanoTime the clock the minute is measured on (a test's own) */
    public ThrottledLog(Logger logger, LongSupplier nanoTime) {
        this.logger = logger;
        this.nanoTime = nanoTime;
        this.next = new AtomicLong(nanoTime.getAsLong());
    }

    /** At ERROR when due. A last argument that is a {@link Throwable} is logged as the cause, as SLF4J does. */
    public void error(String message, Object... arguments) {
        if (due()) {
            logger.error(message + SAID, arguments);
        }
        else {
            logger.debug(message, arguments);
        }
    }

    /** At WARN when due, as {@link #error}. */
    public void warn(String message, Object... arguments) {
        if (due()) {
            logger.warn(message + SAID, arguments);
        }
        else {
            logger.debug(message, arguments);
        }
    }

    /** Whether a minute has passed since the last line said loud; if so, this call is the one to say it. */
    private boolean due() {
        long now = nanoTime.getAsLong();
        long due = next.get();
        return now - due >= 0 && next.compareAndSet(due, now + EVERY_NANOS);
    }
}

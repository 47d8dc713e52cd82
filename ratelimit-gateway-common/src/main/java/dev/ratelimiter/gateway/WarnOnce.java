package dev.ratelimiter.gateway;

import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;

/**
 * A warning about something requests keep causing (a misconfigured source, a tier nobody configured): said once at
 * WARN, then at DEBUG, so one bad setting cannot flood the log at request rate.
 */
public final class WarnOnce {

    private final Logger logger;
    private final AtomicBoolean said = new AtomicBoolean();

    public WarnOnce(Logger logger) {
        this.logger = logger;
    }

    public void warn(String message, Object... arguments) {
        if (!said.get() && said.compareAndSet(false, true)) {
            logger.warn(message + " (said once; later cases at DEBUG)", arguments);
        }
        else {
            logger.debug(message, arguments);
        }
    }
}

package dev.ratelimiter.core;

import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Writes each decision event as one JSON line to the {@code ratelimit.decisions} logger at INFO. */
public final class LogEventSink implements EventSink {

    private static final Logger logger = LoggerFactory.getLogger("ratelimit.decisions");

    @Override
    public void accept(List<DecisionEvent> events) {
        if (logger.isInfoEnabled()) {
            events.forEach(event -> logger.info(DecisionEventJson.write(event)));
        }
    }

    @Override
    public String toString() {
        return "log";
    }
}

package dev.ratelimiter.autoconfigure.rules;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.ratelimiter.core.DecisionEvent;

/**
 * Where a what-if replay reads recorded decision events from: the decision-event topic, or, in tests, anything that
 * holds them.
 */
@FunctionalInterface
public interface WhatIfEvents {

    /**
     * The events recorded in {@code [from, to)}, in time order.
     *
     * @throws TooMany when the range holds more than {@code maxEvents}, before any is read
     * @throws Unavailable when they cannot be read within {@code within}
     */
    Recorded read(Instant from, Instant to, long maxEvents, Duration within);

    /**
     * @param malformed records of the range that were no decision event this version reads
     */
    record Recorded(List<DecisionEvent> events, long malformed) {
    }

    /** The events could not be read in time. */
    final class Unavailable extends RuntimeException {
        public Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The range holds more events than a replay may read. */
    final class TooMany extends RuntimeException {
        public TooMany(String message) {
            super(message);
        }
    }
}

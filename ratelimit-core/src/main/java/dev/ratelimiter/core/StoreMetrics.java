package dev.ratelimiter.core;

import java.time.Duration;

/**
 * What the fail-safe store tells about its calls; the Spring glue records it with Micrometer.
 */
public interface StoreMetrics {

    StoreMetrics NONE = new StoreMetrics() {
    };

    /** How a store call ended. */
    enum Outcome {
        /** Answered in time. */
        SUCCESS,
        /** Failed with an error. */
        ERROR,
        /** Did not answer within the timeout. */
        TIMEOUT,
        /** Not attempted: the circuit breaker is open. */
        REJECTED
    }

    default void storeCall(Outcome outcome, Duration latency) {
    }

    /** One rule decided without the store, by its failure mode, and why the store could not decide it. */
    default void fallbackDecision(FailureMode mode, FallbackReason reason) {
    }
}

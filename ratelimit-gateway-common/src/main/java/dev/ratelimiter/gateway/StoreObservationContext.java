package dev.ratelimiter.gateway;

import io.micrometer.observation.Observation;

/** What a {@link RateLimitObservation#STORE} observation knows of its store call. */
public final class StoreObservationContext extends Observation.Context {

    /** How a store call ended. */
    public enum Outcome {
        /** The store answered. */
        ANSWERED,
        /** The call failed (an error, the store's own timeout); the decision falls back. */
        ERROR,
        /** The decision stopped waiting (its longest wait) or the request went away. */
        CANCELLED;

        private final String label = name().toLowerCase(java.util.Locale.ROOT);

        public String label() {
            return label;
        }
    }

    private final int checks;
    private Outcome outcome;

    StoreObservationContext(int checks) {
        this.checks = checks;
    }

    /** The checks the call evaluates: one per rule that applies to the request. */
    public int getChecks() {
        return checks;
    }

    /** How the call ended; null while it runs. */
    public Outcome getOutcome() {
        return outcome;
    }

    void setOutcome(Outcome outcome) {
        this.outcome = outcome;
    }
}

package dev.ratelimiter.core;

import java.util.List;

import reactor.core.publisher.Mono;

/**
 * The shared store's side of the fallback's charge-back: what an instance admitted on its own while the store could
 * not answer is charged to the store's buckets when it answers again, so that decisions taken without the store add
 * up with the store's instead of beside them (see {@link WithoutStore}).
 */
@FunctionalInterface
public interface FallbackCharges {

    /** Charges nothing: the fallback's admissions are forgotten (a store of this instance's memory alone). */
    FallbackCharges NONE = charges -> Mono.empty();

    /**
     * Takes {@code tokens} from the store's bucket of each charge. Completes when the store has answered; fails with
     * {@link NotSentException} when nothing was sent (the charges may be sent again), with anything else when the
     * store may or may not have applied them (they are not sent again: a charge counted twice refuses a client for
     * nothing, one lost admits a little more once).
     */
    Mono<Void> charge(List<Charge> charges);

    /**
     * @param check the request's check, with the rule as it is (not the instance's share of it)
     * @param tokens tokens of the shared bucket to take (for a sliding window: requests' cost to add to the window in
     * progress)
     * @param previousWindow for a sliding window: requests' cost to add to the window before; 0 otherwise
     */
    record Charge(Check check, double tokens, double previousWindow) {

        /** A token bucket's charge. */
        public Charge(Check check, double tokens) {
            this(check, tokens, 0);
        }

        /** Everything this charge takes. */
        public double total() {
            return tokens + previousWindow;
        }
    }

    /** Some charges were not sent: they may be sent again (the others were sent, and must not be). */
    final class NotSentException extends RuntimeException {

        private final transient List<Charge> unsent;

        /** None of the charges was sent. */
        public NotSentException(String message, Throwable cause) {
            this(message, cause, null);
        }

        /** @param unsent the charges not sent; null: none was */
        public NotSentException(String message, Throwable cause, List<Charge> unsent) {
            super(message, cause);
            this.unsent = unsent == null ? null : List.copyOf(unsent);
        }

        /** The charges that were not sent, of {@code asked}. */
        public List<Charge> unsent(List<Charge> asked) {
            return unsent == null ? asked : unsent;
        }
    }
}

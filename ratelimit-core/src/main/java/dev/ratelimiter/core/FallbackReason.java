package dev.ratelimiter.core;

import java.util.Locale;

/** Why a request was decided without the shared store. */
public enum FallbackReason {

    /** The store did not answer within its timeout of the call being sent. */
    TIMEOUT,
    /** No answer within the longest a decision waits in all (the call could not even be sent in time). */
    MAX_WAIT,
    /** The circuit breaker was open: the store was not asked. */
    BREAKER_OPEN,
    /** The connection that would carry the call was down: nothing was sent. */
    NOT_CONNECTED,
    /** The call failed with an error. */
    ERROR,
    /** Local mode: this instance's shares have not been settled for several intervals. */
    STALE_SHARES;

    /** The reason as a metric tag and in health: lower case, words joined by dashes. */
    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}

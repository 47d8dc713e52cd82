package dev.ratelimiter.core;

/** What a rule does when the shared store cannot answer in time. */
public enum FailureMode {
    /** Decide from this instance's own bucket (the default). */
    LOCAL,
    /** Allow, and count it. */
    OPEN,
    /** Deny with 503 and Retry-After: for login, password reset and one-time-password routes. */
    CLOSED
}

package dev.ratelimiter.core;

/**
 * What happens to a user or tenant id that nobody vouched for: the client wrote it (a header, an expression over the
 * request) where the configuration also reads the token, so it is the value of a caller whose token did not say. Any
 * string is a well-formed id, so a caller who sends a new one per request would otherwise be a new user or tenant
 * each time, with a fresh bucket of every per-user or per-tenant cap.
 */
public enum UnknownValuePolicy {

    /** Counted as given, like a value the token states. */
    ACCEPT,

    /** Refused (403 {@code unknown_identity}) before any rule or store is asked. */
    REJECT,

    /**
     * Counted as the client's address: every unvouched id from one address shares one bucket of each per-user or
     * per-tenant cap, so rotating ids buys nothing.
     */
    PER_ADDRESS
}

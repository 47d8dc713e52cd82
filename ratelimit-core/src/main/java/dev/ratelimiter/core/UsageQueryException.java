package dev.ratelimiter.core;

/** A usage query that cannot be answered as asked: malformed, or about a rule that does not exist. */
public final class UsageQueryException extends RuntimeException {

    /** What is wrong with the query. */
    public enum Kind {
        /** A parameter is missing or malformed. */
        INVALID,
        /** The rule asked about does not exist. */
        UNKNOWN_RULE
    }

    private final Kind kind;
    private final String field;

    public UsageQueryException(Kind kind, String field, String message) {
        super(message, null, false, false);
        this.kind = kind;
        this.field = field;
    }

    public Kind kind() {
        return kind;
    }

    /** The query parameter at fault. */
    public String field() {
        return field;
    }
}

package dev.ratelimiter.core;

import java.util.Locale;

/**
 * How much a request matters when the upstream is full. Load shedding drops the lowest first: background, then
 * normal, user-facing (critical) last.
 */
public enum Priority {

    /** A person is waiting on it: shed only when the upstream is at its limit. */
    CRITICAL,
    /** The default for most API traffic. */
    NORMAL,
    /** Batch jobs, reports, syncs: the first to go. */
    BACKGROUND;

    /**
     * Parses a configured or sent value: {@code critical} (or {@code user-facing}), {@code normal},
     * {@code background}, in any case. Returns {@code null} for anything else.
     */
    public static Priority parse(String value) {
        if (value == null) {
            return null;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "critical", "user-facing" -> CRITICAL;
            case "normal" -> NORMAL;
            case "background" -> BACKGROUND;
            default -> null;
        };
    }

    /** The lower of the two: a client may lower its own priority, never raise it. */
    public Priority atMost(Priority other) {
        return ordinal() >= other.ordinal() ? this : other;
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}

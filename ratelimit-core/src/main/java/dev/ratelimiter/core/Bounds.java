package dev.ratelimiter.core;

import java.time.Duration;

/**
 * The largest values a limit may have. Beyond them a limit is no limit, and the store could no longer hold its state:
 * Redis keeps numbers as doubles (exact to 2^53), and a key must expire within a time Redis accepts. Refusing them
 * when a rule is configured or posted keeps every key with a TTL and every script all or nothing.
 */
final class Bounds {

    /** Most tokens, requests or permits: a trillion. */
    static final long MAX_AMOUNT = 1_000_000_000_000L;

    /** Longest refill period, window or time for a bucket to fill up: a year and a day. */
    static final Duration MAX_PERIOD = Duration.ofDays(366);

    /** Longest lease of a concurrency permit. */
    static final Duration MAX_LEASE = Duration.ofDays(1);

    private Bounds() {
    }

    static void amount(String setting, long value, String what) {
        if (value > MAX_AMOUNT) {
            throw new InvalidLimitException(setting, setting + " must be at most " + MAX_AMOUNT + " (" + what + "), "
                    + "but was " + value + "; a larger limit is no limit: switch the rule off or put it in shadow.");
        }
    }

    static void period(String setting, Duration value, Duration max, String what) {
        if (value.compareTo(max) > 0) {
            throw new InvalidLimitException(setting, setting + " must be at most " + days(max) + " (" + what
                    + "), but was " + value + ".");
        }
    }

    static String days(Duration duration) {
        return duration.toDays() + " days";
    }
}

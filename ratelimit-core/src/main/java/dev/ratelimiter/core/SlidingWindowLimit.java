package dev.ratelimiter.core;

import java.time.Duration;

/**
 * A sliding-window counter: at most {@code limit} requests in any {@code window}, approximated from two
 * fixed-window counters, the previous one weighted by how much of it is still in view. A burst across a window
 * boundary gets about one limit through, not two as with a fixed window; the approximation assumes the previous
 * window's requests were spread evenly.
 *
 * @param limit requests allowed per window
 * @param window the window length
 */
public record SlidingWindowLimit(long limit, Duration window) implements Limit {

    /** Validates; {@code source} names the settings in messages. */
    public static SlidingWindowLimit of(String source, long limit, Duration window) {
        if (limit < 1) {
            throw new InvalidLimitException(source + "limit", source + "limit must be at least 1 (requests allowed "
                    + "per window), but was " + limit + ".");
        }
        if (window == null || window.toMillis() < 100) {
            throw new InvalidLimitException(source + "window", source + "window must be a duration of at least 100ms "
                    + "(for example 1m or 1h), but was " + window + ".");
        }
        Bounds.amount(source + "limit", limit, "requests allowed per window");
        Bounds.period(source + "window", window, Bounds.MAX_PERIOD, "the window length");
        return new SlidingWindowLimit(limit, window);
    }

    @Override
    public long quota() {
        return limit;
    }

    @Override
    public SlidingWindowLimit share(long amount) {
        return new SlidingWindowLimit(Math.max(1, amount), window);
    }

    @Override
    public SlidingWindowLimit scaled(double factor) {
        return new SlidingWindowLimit(Math.max(1, (long) Math.ceil(limit * factor)), window);
    }

    /** Counters per window index: an index means something else under another window length. */
    @Override
    public String shape() {
        return "w" + window.toMillis();
    }

    /** The current and the previous window are both read, so state lives for two windows. */
    @Override
    public Duration stateLifetime() {
        return window.multipliedBy(2);
    }

    @Override
    public boolean capsInProgress() {
        return false;
    }

    @Override
    public boolean settlesLocally() {
        return false;
    }

    @Override
    public <R> R match(Cases<R> cases) {
        return cases.slidingWindow(this);
    }
}

package dev.ratelimiter.core;

import java.time.Duration;

/**
 * A token bucket: up to {@code capacity} tokens (the burst), refilled continuously at {@code refillTokens}
 * per {@code refillPeriod}. Allows bursts deliberately and holds the long-run average.
 *
 * @param capacity largest burst
 * @param refillTokens tokens added back per refill period
 * @param refillPeriod period over which refill tokens are added back
 */
public record TokenBucketLimit(long capacity, long refillTokens, Duration refillPeriod) implements Limit {

    /** Validates; {@code source} names the settings in messages, e.g. {@code ratelimit.rules.api.}. */
    public static TokenBucketLimit of(String source, long capacity, long refillTokens, Duration refillPeriod) {
        if (capacity < 1) {
            throw new InvalidLimitException(source + "capacity", source + "capacity must be at least 1 (the largest "
                    + "burst a client may send), but was " + capacity + ".");
        }
        if (refillTokens < 1) {
            throw new InvalidLimitException(source + "refill-tokens", source + "refill-tokens must be at least 1 "
                    + "(tokens added back per refill period), but was " + refillTokens + ".");
        }
        if (refillPeriod == null || refillPeriod.isNegative() || refillPeriod.toMillis() < 1) {
            throw new InvalidLimitException(source + "refill-period", source + "refill-period must be a duration of "
                    + "at least 1ms (for example 1s or 1m), but was " + refillPeriod + ".");
        }
        Bounds.amount(source + "capacity", capacity, "the largest burst");
        Bounds.amount(source + "refill-tokens", refillTokens, "tokens added back per refill period");
        Bounds.period(source + "refill-period", refillPeriod, Bounds.MAX_PERIOD, "the period refill tokens are added "
                + "back over");
        TokenBucketLimit limit = new TokenBucketLimit(capacity, refillTokens, refillPeriod);
        if (limit.window().compareTo(Bounds.MAX_PERIOD) > 0) {
            throw new InvalidLimitException(source + "refill-tokens", source + "capacity " + capacity + " refilled at "
                    + refillTokens + " per " + refillPeriod + " takes " + limit.window().toDays() + " days to fill; "
                    + "a bucket must fill up within " + Bounds.days(Bounds.MAX_PERIOD) + " (raise refill-tokens or "
                    + "shorten refill-period).");
        }
        return limit;
    }

    /** Refill rate in tokens per second. */
    public double tokensPerSecond() {
        return refillTokens * 1e9 / refillPeriod.toNanos();
    }

    @Override
    public long quota() {
        return capacity;
    }

    /** Time an empty bucket takes to fill up again. */
    @Override
    public Duration window() {
        return Duration.ofNanos((long) Math.ceil(capacity * 1e9 / tokensPerSecond()));
    }

    @Override
    public TokenBucketLimit scaled(double factor) {
        return new TokenBucketLimit(Math.max(1, (long) Math.ceil(capacity * factor)),
                Math.max(1, (long) Math.ceil(refillTokens * factor)), refillPeriod);
    }

    /**
     * {@code amount} tokens refilled over this bucket's time to fill: the rate is {@code amount / capacity} of this
     * one's, without rounding the refill to whole tokens per period.
     */
    @Override
    public TokenBucketLimit share(long amount) {
        long tokens = Math.max(1, amount);
        return new TokenBucketLimit(tokens, tokens, window());
    }

    /** Tokens and a refill time: capacity and rate may change, the state still means the same. */
    @Override
    public String shape() {
        return "t";
    }

    /** A bucket idle for its time to fill is full again, so forgetting it changes nothing. */
    @Override
    public Duration stateLifetime() {
        return window();
    }

    @Override
    public boolean capsInProgress() {
        return false;
    }

    @Override
    public boolean settlesLocally() {
        return true;
    }

    @Override
    public <R> R match(Cases<R> cases) {
        return cases.tokenBucket(this);
    }
}

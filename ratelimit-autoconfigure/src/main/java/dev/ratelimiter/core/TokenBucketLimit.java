package dev.ratelimiter.core;

import java.time.Duration;
import java.util.Objects;

/**
 * A token bucket: up to {@code capacity} tokens (the burst), refilled continuously at
 * {@code refillTokens} per {@code refillPeriod}. A request costs one or more tokens.
 *
 * <p>Immutable; built through {@link #builder(String)}, which refuses values that cannot work.
 */
public final class TokenBucketLimit {

    private final String policy;
    private final long capacity;
    private final long refillTokens;
    private final Duration refillPeriod;

    private TokenBucketLimit(Builder builder) {
        this.policy = builder.policy;
        this.capacity = builder.capacity;
        this.refillTokens = builder.refillTokens;
        this.refillPeriod = builder.refillPeriod;
    }

    /** Starts a limit for the named policy (shown to clients in {@code RateLimit-Policy}). */
    public static Builder builder(String policy) {
        return new Builder(policy);
    }

    public String policy() {
        return policy;
    }

    public long capacity() {
        return capacity;
    }

    public long refillTokens() {
        return refillTokens;
    }

    public Duration refillPeriod() {
        return refillPeriod;
    }

    /** Refill rate in tokens per second. */
    public double tokensPerSecond() {
        return refillTokens * 1e9 / refillPeriod.toNanos();
    }

    /** Time an empty bucket takes to fill up again; the natural "window" of this limit. */
    public Duration timeToFill() {
        return Duration.ofNanos((long) Math.ceil(capacity * 1e9 / tokensPerSecond()));
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof TokenBucketLimit that && policy.equals(that.policy) && capacity == that.capacity
                && refillTokens == that.refillTokens && refillPeriod.equals(that.refillPeriod);
    }

    @Override
    public int hashCode() {
        return Objects.hash(policy, capacity, refillTokens, refillPeriod);
    }

    @Override
    public String toString() {
        return policy + "(capacity=" + capacity + ", refill=" + refillTokens + "/" + refillPeriod + ")";
    }

    /** Builds a {@link TokenBucketLimit}, naming the offending setting when a value cannot work. */
    public static final class Builder {

        private final String policy;
        private String settingPrefix;
        private long capacity;
        private long refillTokens;
        private Duration refillPeriod = Duration.ofSeconds(1);

        private Builder(String policy) {
            this.policy = policy;
            this.settingPrefix = "limit '" + policy + "'";
        }

        /** Where the values come from, e.g. {@code ratelimit.tiers.free.limits.default}, for error messages. */
        public Builder source(String settingPrefix) {
            this.settingPrefix = settingPrefix;
            return this;
        }

        public Builder capacity(long capacity) {
            this.capacity = capacity;
            return this;
        }

        public Builder refill(long tokens, Duration period) {
            this.refillTokens = tokens;
            this.refillPeriod = period;
            return this;
        }

        public TokenBucketLimit build() {
            PolicyNames.requireValid(settingPrefix, policy);
            if (capacity < 1) {
                throw new InvalidLimitException(settingPrefix + ".capacity", settingPrefix
                        + ".capacity must be at least 1 (the largest burst a client may send), but was " + capacity + ".");
            }
            if (refillTokens < 1) {
                throw new InvalidLimitException(settingPrefix + ".refill-tokens", settingPrefix
                        + ".refill-tokens must be at least 1 (tokens added back per refill period), but was "
                        + refillTokens + ".");
            }
            if (refillPeriod == null || refillPeriod.isNegative() || refillPeriod.toMillis() < 1) {
                throw new InvalidLimitException(settingPrefix + ".refill-period", settingPrefix
                        + ".refill-period must be a duration of at least 1ms (for example 1s or 1m), but was "
                        + refillPeriod + ".");
            }
            return new TokenBucketLimit(this);
        }
    }
}

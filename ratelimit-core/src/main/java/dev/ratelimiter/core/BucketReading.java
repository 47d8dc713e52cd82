package dev.ratelimiter.core;

import java.time.Duration;

/**
 * What one bucket holds right now, read without spending anything ({@link UsageReader}).
 *
 * @param stored whether the store holds state for the bucket at all: a bucket nobody spent from is not stored, and
 * reads as full (nothing in progress)
 * @param remaining what the next request could still spend: whole tokens (a token bucket), room left under the
 * window's weighted estimate (a sliding window), permits free (a concurrency cap)
 * @param resetAfter until the bucket is whole again if nothing more is spent (zero when it is, and for a concurrency
 * cap, whose permits come back when their requests end)
 * @param inProgress a concurrency cap's permits held now; 0 for the other algorithms
 */
public record BucketReading(boolean stored, long remaining, Duration resetAfter, long inProgress) {

    public BucketReading {
        remaining = Math.max(0, remaining);
        resetAfter = resetAfter.isNegative() ? Duration.ZERO : resetAfter;
    }

    /** A bucket the store holds nothing for: full, nothing in progress. */
    public static BucketReading untouched(Limit limit) {
        return new BucketReading(false, limit.quota(), Duration.ZERO, 0);
    }
}

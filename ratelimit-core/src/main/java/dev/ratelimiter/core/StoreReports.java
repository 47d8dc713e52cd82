package dev.ratelimiter.core;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * What the shared store last reported for the buckets it decided, so that a bucket the fallback makes starts where the
 * store left it instead of full. A fixed table: a report of one bucket may overwrite another's (that bucket then
 * starts full, as it did before there was this table), so memory stays bounded however many clients there are, and
 * writing costs one array store — it is written for every decision the store makes, on the thread that reads the
 * store's answers, where a cache's bookkeeping (its write buffer, its eviction) must not run.
 */
final class StoreReports {

    private static final int SIZE = 1 << 16;

    private final AtomicReferenceArray<Report> slots = new AtomicReferenceArray<>(SIZE);

    /** The store said {@code remaining} were left in {@code bucket} at {@code atNanos}. */
    record Report(BucketKey bucket, long remaining, long atNanos) {
    }

    void put(BucketKey bucket, long remaining, long atNanos) {
        slots.lazySet(slot(bucket), new Report(bucket, remaining, atNanos));
    }

    /** The store's last report of {@code bucket} still in the table, or null. */
    Report get(BucketKey bucket) {
        Report report = slots.get(slot(bucket));
        return report != null && report.bucket().equals(bucket) ? report : null;
    }

    private static int slot(BucketKey bucket) {
        int hash = bucket.hashCode();
        return (hash ^ (hash >>> 16)) & (SIZE - 1);
    }
}

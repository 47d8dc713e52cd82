package dev.ratelimiter.core;

import java.util.List;

import reactor.core.publisher.Mono;

/**
 * The store side of local mode: at most one call per settle interval, for the keys of this instance that need settling
 * (see {@link LeaseStore}).
 */
@FunctionalInterface
public interface SettleClient {

    /**
     * What this instance reports for one bucket.
     *
     * @param bucket the bucket
     * @param limit its limit
     * @param demand requests seen since the last settle, refused ones included: the instance's weight
     * @param held unspent tokens of its share it keeps
     * @param returned tokens of its share it gave back since the last settle (dropped locally already)
     * @param provisionalSpent tokens spent before the bucket's first settle, never granted: the store deducts them
     * @param need the largest cost of one request seen since the last settle: a share smaller than that serves none
     * of them, so the store grants at least that much or asks for the share back
     * @param want tokens this instance expects to spend in {@code silenceMicros} at its current rate: when no other
     * instance uses the bucket and this is at most half of it, the store lets it go silent with at most half the
     * bucket, and keeps the rest in its pool, where an instance the traffic moves to finds it at once
     * @param silenceMicros how long this instance may go without settling the bucket when the store lets it
     * ({@link Grant#silent()}; {@code 0}: it settles every interval); the store counts it alive that much longer
     */
    record Report(BucketKey bucket, TokenBucketLimit limit, long demand, double held, double returned,
            double provisionalSpent, long need, long want, long silenceMicros) {

        /** A report of an instance that settles every interval: no cap on its grant, no silence. */
        public Report(BucketKey bucket, TokenBucketLimit limit, long demand, double held, double returned,
                double provisionalSpent, long need) {
            this(bucket, limit, demand, held, returned, provisionalSpent, need, Long.MAX_VALUE, 0);
        }
    }

    /**
     * What the store answers for one bucket.
     *
     * @param grant tokens added to this instance's share (already taken from the store's pool)
     * @param giveBack tokens this instance should give back (more than its fair share)
     * @param storeRemaining whole tokens left in the store's pool after the grant
     * @param silent whether this instance may stay silent about the bucket ({@link Report#silenceMicros()}) while its
     * share lasts: no other live instance holds a share of it or saw demand for it, the client is far from its limit
     * ({@link Report#want()} at most half the bucket), and this share holds something and at most half the bucket (the
     * rest in the pool, for an instance the traffic moves to)
     * @param outcome whether the store settled the bucket; the numbers mean nothing otherwise
     */
    record Grant(long grant, long giveBack, long storeRemaining, boolean silent, Outcome outcome) {

        /** A bucket whose report was never sent: the store did nothing with it. */
        public static final Grant NOT_SENT = new Grant(0, 0, 0, false, Outcome.NOT_SENT);

        /** A bucket whose report was sent but not answered: the store may or may not have settled it. */
        public static final Grant UNKNOWN = new Grant(0, 0, 0, false, Outcome.UNKNOWN);

        /** A settled bucket this instance settles again at the next interval. */
        public Grant(long grant, long giveBack, long storeRemaining) {
            this(grant, giveBack, storeRemaining, false, Outcome.SETTLED);
        }

        /** A settled bucket. */
        public Grant(long grant, long giveBack, long storeRemaining, boolean silent) {
            this(grant, giveBack, storeRemaining, silent, Outcome.SETTLED);
        }

        public boolean settled() {
            return outcome == Outcome.SETTLED;
        }
    }

    /**
     * Whether one bucket was settled. A settle is several store calls, and one may fail while the others succeed:
     * each bucket says which, so that the settled ones are applied and the others are repaired without counting a
     * return twice.
     */
    enum Outcome {
        SETTLED, NOT_SENT, UNKNOWN
    }

    /**
     * Grants in the order of {@code reports}, one per report, {@link Grant#NOT_SENT} or {@link Grant#UNKNOWN} for the
     * buckets of a call that failed. The Mono fails only when nothing can be said about any bucket.
     */
    Mono<List<Grant>> settle(List<Report> reports);
}

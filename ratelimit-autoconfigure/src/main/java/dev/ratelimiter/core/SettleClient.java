package dev.ratelimiter.core;

import java.util.List;

import reactor.core.publisher.Mono;

/**
 * The store side of local mode: one call per settle interval for every key this instance holds or touched.
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
     */
    record Report(BucketKey bucket, TokenBucketLimit limit, long demand, double held, double returned,
            double provisionalSpent, long need) {
    }

    /**
     * What the store answers for one bucket.
     *
     * @param grant tokens added to this instance's share (already taken from the store's pool)
     * @param giveBack tokens this instance should give back (more than its fair share)
     * @param storeRemaining whole tokens left in the store's pool after the grant
     * @param outcome whether the store settled the bucket; the numbers mean nothing otherwise
     */
    record Grant(long grant, long giveBack, long storeRemaining, Outcome outcome) {

        /** A bucket whose report was never sent: the store did nothing with it. */
        public static final Grant NOT_SENT = new Grant(0, 0, 0, Outcome.NOT_SENT);

        /** A bucket whose report was sent but not answered: the store may or may not have settled it. */
        public static final Grant UNKNOWN = new Grant(0, 0, 0, Outcome.UNKNOWN);

        /** A settled bucket. */
        public Grant(long grant, long giveBack, long storeRemaining) {
            this(grant, giveBack, storeRemaining, Outcome.SETTLED);
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

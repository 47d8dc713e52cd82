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
     */
    record Grant(long grant, long giveBack, long storeRemaining) {
    }

    /** Grants in the order of {@code reports}. */
    Mono<List<Grant>> settle(List<Report> reports);
}

package dev.ratelimiter.core;

/**
 * One bucket to read for the usage of a client ({@link UsageReader}).
 *
 * @param rule the rule as it is decided here: for a global rule this region's share of its limit, for a sharded rule
 * the shard's part
 * @param bucket the bucket the client's requests spend from under that rule
 */
public record UsageProbe(Rule rule, BucketKey bucket) {

    /**
     * Whether the bucket is settled locally (store-mode local): its shared state is the pool that instances take their
     * shares from, so what the store holds is only part of the picture.
     */
    public boolean local() {
        return rule.storeMode() == StoreMode.LOCAL;
    }
}

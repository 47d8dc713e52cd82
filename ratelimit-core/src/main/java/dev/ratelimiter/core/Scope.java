package dev.ratelimiter.core;

/**
 * Where a rule's limit holds: in each region on its own, or once across all regions.
 */
public enum Scope {

    /** Each region enforces the whole limit on its own counters (the default; one region is all there is). */
    REGIONAL,

    /**
     * The limit holds across regions: each region's bucket holds its share of it ({@link RegionShares}), shares that
     * always sum to the limit and that a rebalancer moves toward the regions that need them.
     */
    GLOBAL
}

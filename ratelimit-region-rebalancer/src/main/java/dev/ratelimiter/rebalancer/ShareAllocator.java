package dev.ratelimiter.rebalancer;

import dev.ratelimiter.core.QuotaSplit;

/**
 * Where one bucket's quota should be, given what each region asked for: the rebalancer's algorithm, pure arithmetic.
 *
 * <ul>
 * <li>A region wants its demand (admitted plus refused, per window) with {@code headroom} on top, and never less than
 * its floor.</li>
 * <li>No region wants more than its default share: the default split (the key needs nothing moved, and leaves the
 * shares topic).</li>
 * <li>All wants fit: each region gets its want, and what is left over is split by weight (a quiet region keeps room
 * for traffic that arrives before the next rebalance).</li>
 * <li>They do not fit: each region gets its floor, and the rest is split in proportion to how much each wants above
 * it — a region refusing most gets most.</li>
 * </ul>
 * The result always sums to exactly the quota, and every region holds at least its floor.
 *
 * @param weights every region's weight in the default split, in the order of the regions (sorted by name)
 * @param floor the least part of the quota each region keeps, e.g. 0.05 (a region never drops to nothing, so its
 * first requests pass while the rebalancer catches up)
 * @param headroom how far above its demand a region's want is, e.g. 0.2
 */
public record ShareAllocator(double[] weights, double floor, double headroom) {

    public ShareAllocator {
        if (weights.length == 0) {
            throw new IllegalArgumentException("at least one region is needed");
        }
        if (!(floor >= 0) || floor * weights.length > 1) {
            throw new IllegalArgumentException("the floor must be between 0 and 1 / regions (" + 1.0 / weights.length
                    + "), but was " + floor);
        }
        if (!(headroom >= 0) || headroom > 10) {
            throw new IllegalArgumentException("the headroom must be between 0 and 10, but was " + headroom);
        }
        weights = weights.clone();
    }

    public long[] defaults(long quota) {
        return QuotaSplit.byWeight(quota, weights);
    }

    /** Each region's floor of {@code quota}: at least 1 when the quota allows every region 1. */
    public long floorOf(long quota) {
        long floorAmount = (long) Math.floor(quota * floor);
        return quota >= weights.length ? Math.max(1, floorAmount) : floorAmount;
    }

    /**
     * @param quota the bucket's whole limit
     * @param demand each region's demand in tokens per window (admitted and refused), in the order of the regions
     */
    public long[] allocate(long quota, double[] demand) {
        int n = weights.length;
        long[] defaults = defaults(quota);
        long floorAmount = floorOf(quota);
        long[] want = new long[n];
        boolean moves = false;
        long wanted = 0;
        for (int i = 0; i < n; i++) {
            double asked = Math.max(0, demand[i]) * (1 + headroom);
            want[i] = Math.max(floorAmount, (long) Math.min(quota, Math.ceil(asked)));
            moves |= want[i] > defaults[i];
            wanted += want[i];
        }
        if (!moves) {
            return defaults;
        }
        if (wanted <= quota) {
            long[] spare = QuotaSplit.byWeight(quota - wanted, weights);
            for (int i = 0; i < n; i++) {
                want[i] += spare[i];
            }
            return want;
        }
        double[] above = new double[n];
        for (int i = 0; i < n; i++) {
            above[i] = want[i] - floorAmount;
        }
        long[] rest = QuotaSplit.byWeight(quota - floorAmount * n, above);
        for (int i = 0; i < n; i++) {
            rest[i] += floorAmount;
        }
        return rest;
    }
}

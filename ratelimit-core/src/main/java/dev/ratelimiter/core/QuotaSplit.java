package dev.ratelimiter.core;

/**
 * Whole shares of a quota, in proportion to weights, that sum to exactly the quota: each part is rounded down and
 * the units left over go to the largest remainders (ties to the earlier part). 1,000 split three ways is 334, 333,
 * 333. Plain arithmetic on arrays: the gateway's default split and the rebalancer's allocation share it.
 */
public final class QuotaSplit {

    private QuotaSplit() {
    }

    /**
     * {@code quota} split in proportion to {@code weights} (each ≥ 0, at least one > 0). Every part with a positive
     * weight gets at least 1 when the quota allows it, so no region is left with a bucket that can never pass.
     */
    public static long[] byWeight(long quota, double[] weights) {
        int n = weights.length;
        double total = 0;
        for (double weight : weights) {
            if (!(weight >= 0) || Double.isInfinite(weight)) {
                throw new IllegalArgumentException("weights must be finite and not negative");
            }
            total += weight;
        }
        if (total <= 0) {
            throw new IllegalArgumentException("at least one weight must be positive");
        }
        long[] parts = new long[n];
        double[] remainders = new double[n];
        long given = 0;
        for (int i = 0; i < n; i++) {
            double exact = quota * (weights[i] / total);
            parts[i] = (long) Math.floor(exact);
            remainders[i] = exact - parts[i];
            given += parts[i];
        }
        for (long left = quota - given; left > 0; left--) {
            int best = 0;
            for (int i = 1; i < n; i++) {
                if (remainders[i] > remainders[best]) {
                    best = i;
                }
            }
            parts[best]++;
            remainders[best] = -1;
        }
        atLeastOne(parts, weights, quota);
        return parts;
    }

    /** Parts with a positive weight but nothing get 1, taken from the largest parts, while the quota allows it. */
    private static void atLeastOne(long[] parts, double[] weights, long quota) {
        long positive = 0;
        for (double weight : weights) {
            positive += weight > 0 ? 1 : 0;
        }
        if (quota < positive) {
            return;
        }
        for (int i = 0; i < parts.length; i++) {
            if (weights[i] > 0 && parts[i] == 0) {
                int largest = 0;
                for (int j = 1; j < parts.length; j++) {
                    if (parts[j] > parts[largest]) {
                        largest = j;
                    }
                }
                parts[largest]--;
                parts[i] = 1;
            }
        }
    }

    /** The smaller of each pair: what every region may hold while a change from {@code a} to {@code b} travels. */
    public static long[] min(long[] a, long[] b) {
        long[] min = new long[a.length];
        for (int i = 0; i < a.length; i++) {
            min[i] = Math.min(a[i], b[i]);
        }
        return min;
    }

    public static long sum(long[] parts) {
        long sum = 0;
        for (long part : parts) {
            sum += part;
        }
        return sum;
    }
}

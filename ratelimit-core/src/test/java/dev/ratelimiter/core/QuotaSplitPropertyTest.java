package dev.ratelimiter.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

import static org.assertj.core.api.Assertions.assertThat;

/** The default split every region computes alike: whole shares, in proportion, summing to exactly the quota. */
class QuotaSplitPropertyTest {

    @Property(tries = 3_000)
    void sharesSumToTheQuotaAndEachIsWithinOneOfItsProportion(
            @ForAll @LongRange(min = 0, max = 1_000_000_000_000L) long quota, @ForAll("weights") double[] weights) {
        long[] parts = QuotaSplit.byWeight(quota, weights);
        assertThat(QuotaSplit.sum(parts)).isEqualTo(quota);
        double total = 0;
        for (double weight : weights) {
            total += weight;
        }
        boolean everyPartAtLeastOne = true;
        for (double weight : weights) {
            everyPartAtLeastOne &= quota * weight / total >= 1;
        }
        for (int i = 0; i < parts.length; i++) {
            assertThat(parts[i]).isNotNegative();
            if (quota >= weights.length) {
                assertThat(parts[i]).as("no region with a bucket that never passes").isPositive();
            }
            double exact = quota * weights[i] / total;
            // Within one of the exact proportion; a part raised to 1 is taken from the largest, at most one unit per
            // region.
            double slack = everyPartAtLeastOne ? 1 : weights.length;
            assertThat(Math.abs(parts[i] - exact)).as("part %d of %s", i, java.util.Arrays.toString(parts))
                    .isLessThan(slack + 1e-6);
        }
    }

    @Property(tries = 200)
    void everyRegionComputesTheSameSplit(@ForAll @LongRange(min = 1, max = 1_000_000) long quota,
            @ForAll("weights") double[] weights) {
        assertThat(QuotaSplit.byWeight(quota, weights)).containsExactly(QuotaSplit.byWeight(quota, weights.clone()));
    }

    @Provide
    Arbitrary<double[]> weights() {
        return Arbitraries.doubles().between(0.01, 100).array(double[].class).ofMinSize(1).ofMaxSize(8);
    }
}

package dev.ratelimiter.core;

import java.util.stream.Stream;

import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;

/** The default split every region computes alike: whole shares, in proportion, summing to exactly the quota. */
class QuotaSplitPropertyTest {

    /** A quota and the regions' weights. */
    record Split(long quota, double[] weights) {

        @Override
        public String toString() {
            return quota + " by " + java.util.Arrays.toString(weights);
        }
    }

    @TestFactory
    Stream<DynamicTest> sharesSumToTheQuotaAndEachIsWithinOneOfItsProportion() {
        return Property.forAll(Gen.zip(Gen.longs(0, 1_000_000_000_000L), weights(), Split::new)).tries(3_000)
                .check(split -> sharesSumToTheQuotaAndEachIsWithinOneOfItsProportion(split.quota(), split.weights()));
    }

    private static void sharesSumToTheQuotaAndEachIsWithinOneOfItsProportion(long quota, double[] weights) {
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

    @TestFactory
    Stream<DynamicTest> everyRegionComputesTheSameSplit() {
        return Property.forAll(Gen.zip(Gen.longs(1, 1_000_000), weights(), Split::new)).tries(200)
                .check(split -> assertThat(QuotaSplit.byWeight(split.quota(), split.weights()))
                        .containsExactly(QuotaSplit.byWeight(split.quota(), split.weights().clone())));
    }

    private static Gen<double[]> weights() {
        return Gen.doubles(0.01, 100).list(1, 8).map(list -> list.stream().mapToDouble(Double::doubleValue).toArray());
    }
}

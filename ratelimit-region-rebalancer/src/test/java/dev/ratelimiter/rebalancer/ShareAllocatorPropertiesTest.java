package dev.ratelimiter.rebalancer;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Stream;

import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rebalancer's promises as properties over random limits, weights and demands: shares always sum to the limit,
 * every region keeps its floor, and the two-step publication never lets the shares in force across regions sum to
 * more than the limit while a change travels.
 */
class ShareAllocatorPropertiesTest {

    /** A limit split among regions of these weights, with this floor, for this demand. */
    record Allocation(long quota, double[] weights, double floor, double[] demand) {

        @Override
        public String toString() {
            return quota + " by " + Arrays.toString(weights) + " floor " + floor + " demand " + Arrays.toString(demand);
        }
    }

    @TestFactory
    Stream<DynamicTest> sharesSumToTheLimitAndKeepTheFloor() {
        Gen<Allocation> allocations = Gen.zip(Gen.longs(3, 1_000_000_000L), weights(), Gen.doubles(0, 0.3), demands(),
                Allocation::new);
        return Property.forAll(allocations).tries(2_000).check(allocation -> sharesSumToTheLimitAndKeepTheFloor(
                allocation.quota(), allocation.weights(), allocation.floor(), allocation.demand()));
    }

    private static void sharesSumToTheLimitAndKeepTheFloor(long quota, double[] weights, double floor,
            double[] demand) {
        double usable = Math.min(floor, 1.0 / weights.length);
        ShareAllocator allocator = new ShareAllocator(weights, usable, 0.2);
        long[] shares = allocator.allocate(quota, Arrays.copyOf(demand, weights.length));
        assertThat(Arrays.stream(shares).sum()).isEqualTo(quota);
        for (long share : shares) {
            assertThat(share).isGreaterThanOrEqualTo(allocator.floorOf(quota));
            if (quota >= weights.length) {
                assertThat(share).as("a region with a bucket that never passes").isGreaterThanOrEqualTo(1);
            }
        }
    }

    /** A limit, the regions' weights, and how much of its default each region asks for. */
    record Demand(long quota, double[] weights, double fraction) {

        @Override
        public String toString() {
            return quota + " by " + Arrays.toString(weights) + " at " + fraction + " of the default";
        }
    }

    @TestFactory
    Stream<DynamicTest> aBucketNoRegionNeedsMoreThanItsDefaultForStaysOnTheDefault() {
        // 1000 tries: what the property had when it left the number to its library's default
        return Property.forAll(Gen.zip(Gen.longs(30, 1_000_000), weights(), Gen.doubles(0, 0.8), Demand::new))
                .tries(1_000).check(demand -> aBucketNoRegionNeedsMoreThanItsDefaultForStaysOnTheDefault(
                        demand.quota(), demand.weights(), demand.fraction()));
    }

    private static void aBucketNoRegionNeedsMoreThanItsDefaultForStaysOnTheDefault(long quota, double[] weights,
            double fraction) {
        ShareAllocator allocator = new ShareAllocator(weights, 0.0, 0.2);
        long[] defaults = allocator.defaults(quota);
        double[] demand = new double[weights.length];
        for (int i = 0; i < demand.length; i++) {
            demand[i] = defaults[i] * fraction; // × 1.2 headroom stays within the default
        }
        assertThat(allocator.allocate(quota, demand)).containsExactly(defaults);
    }

    /**
     * Any sequence of demands, published the way the processor publishes: the shares a region can hold while record
     * k+1 travels are those of record k or k+1, so the sum over regions of the larger of the two must stay within the
     * limit.
     */
    /** A limit, the regions' demands tick after tick, and how many ticks a grown share waits. */
    record Ticks(long quota, double[][] demands, int growDelayTicks) {

        @Override
        public String toString() {
            return quota + " grow after " + growDelayTicks + " demands " + Arrays.deepToString(demands);
        }
    }

    @TestFactory
    Stream<DynamicTest> noTwoConsecutiveRecordsTogetherExceedTheLimit() {
        return Property.forAll(Gen.zip(Gen.longs(3, 100_000), demandSequence(), Gen.ints(1, 4), Ticks::new))
                .tries(500).check(ticks -> noTwoConsecutiveRecordsTogetherExceedTheLimit(ticks.quota(),
                        ticks.demands(), ticks.growDelayTicks()));
    }

    private static void noTwoConsecutiveRecordsTogetherExceedTheLimit(long quota, double[][] demands,
            int growDelayTicks) {
        RebalancerSettings settings = new RebalancerSettings("unused:9092", "u", "s", "t", null,
                Map.of("a", 1.0, "b", 2.0, "c", 1.0), 0.05, 0.2, Duration.ofSeconds(1),
                Duration.ofSeconds(growDelayTicks), Duration.ofSeconds(60), Duration.ofSeconds(5), Duration.ofMinutes(10));
        RebalanceProcessor processor = new RebalanceProcessor(settings);
        BucketShares bucket = new BucketShares();
        bucket.quota = quota;
        bucket.windowMs = 60_000;
        long[] defaults = settings.allocator().defaults(quota);
        long[] inForce = defaults;
        long now = 10_000;
        for (double[] demand : demands) {
            now += 1_000;
            double[] scaled = new double[3];
            for (int i = 0; i < 3; i++) {
                scaled[i] = demand[i] * quota;
            }
            long[] next = processor.step(bucket, scaled, now);
            if (next == null) {
                continue;
            }
            long together = 0;
            for (int i = 0; i < 3; i++) {
                together += Math.max(inForce[i], next[i]);
            }
            assertThat(together).as("shares in force while %s replaces %s", Arrays.toString(next),
                    Arrays.toString(inForce)).isLessThanOrEqualTo(quota);
            assertThat(Arrays.stream(next).sum()).isLessThanOrEqualTo(quota);
            bucket.published = Arrays.equals(next, defaults) ? null : next;
            inForce = next;
        }
    }

    private static Gen<double[]> weights() {
        return doubleArrays(Gen.doubles(0.1, 10), 1, 5);
    }

    private static Gen<double[]> demands() {
        return doubleArrays(Gen.doubles(0, 5e9), 5, 5);
    }

    private static Gen<double[][]> demandSequence() {
        return doubleArrays(Gen.doubles(0, 3), 3, 3).list(1, 40).map(ticks -> ticks.toArray(double[][]::new));
    }

    private static Gen<double[]> doubleArrays(Gen<Double> values, int minLength, int maxLength) {
        return values.list(minLength, maxLength).map(list -> list.stream().mapToDouble(Double::doubleValue).toArray());
    }
}

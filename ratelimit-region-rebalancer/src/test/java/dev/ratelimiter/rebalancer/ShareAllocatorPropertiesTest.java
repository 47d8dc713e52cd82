package dev.ratelimiter.rebalancer;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rebalancer's promises as properties over random limits, weights and demands: shares always sum to the limit,
 * every region keeps its floor, and the two-step publication never lets the shares in force across regions sum to
 * more than the limit while a change travels.
 */
class ShareAllocatorPropertiesTest {

    @Property(tries = 2_000)
    void sharesSumToTheLimitAndKeepTheFloor(@ForAll @LongRange(min = 3, max = 1_000_000_000L) long quota,
            @ForAll("weights") double[] weights, @ForAll @DoubleRange(min = 0, max = 0.3) double floor,
            @ForAll("demands") double[] demand) {
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

    @Property(tries = 1_000)
    void aBucketNoRegionNeedsMoreThanItsDefaultForStaysOnTheDefault(
            @ForAll @LongRange(min = 30, max = 1_000_000) long quota, @ForAll("weights") double[] weights,
            @ForAll @DoubleRange(min = 0, max = 0.8) double fraction) {
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
    @Property(tries = 500)
    void noTwoConsecutiveRecordsTogetherExceedTheLimit(@ForAll @LongRange(min = 3, max = 100_000) long quota,
            @ForAll("demandSequence") double[][] demands, @ForAll @IntRange(min = 1, max = 4) int growDelayTicks) {
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

    @Provide
    Arbitrary<double[]> weights() {
        return Arbitraries.doubles().between(0.1, 10).array(double[].class).ofMinSize(1).ofMaxSize(5);
    }

    @Provide
    Arbitrary<double[]> demands() {
        return Arbitraries.doubles().between(0, 5e9).array(double[].class).ofSize(5);
    }

    @Provide
    Arbitrary<double[][]> demandSequence() {
        Arbitrary<double[]> tick = Arbitraries.doubles().between(0, 3).array(double[].class).ofSize(3);
        return tick.array(double[][].class).ofMinSize(1).ofMaxSize(40);
    }
}

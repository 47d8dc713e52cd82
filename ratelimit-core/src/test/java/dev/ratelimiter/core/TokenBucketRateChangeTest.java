package dev.ratelimiter.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

/**
 * The in-memory token bucket (what the fallback, local shares and the memory store run) when its rate changes, as
 * rate_limit.lua does it ({@code ShareGrowBurstTest} on real Redis): a region's share of 100 per 10 s grown from 5 to
 * 90 under a client at 20 requests/s gets no burst — the time before the grow is credited at the old rate.
 */
class TokenBucketRateChangeTest {

    private static final TokenBucketLimit GLOBAL = TokenBucketLimit.of("test.", 100, 100, Duration.ofSeconds(10));
    private static final TokenBucketLimit SMALL = GLOBAL.share(5);
    private static final TokenBucketLimit GROWN = GLOBAL.share(90);
    private static final long STEP = 50_000_000L;
    private static final long SECOND = 1_000_000_000L;

    @Test
    void aGrownShareAdmitsItsNewRateFromTheGrowOnAndNoMore() {
        for (int phase = 0; phase < 40; phase++) {
            BucketState bucket = BucketState.create(SMALL, 0);
            long t = 0;
            long grow = 10 * SECOND + phase * STEP;
            for (; t < grow; t += STEP) {
                spend(bucket, SMALL, t);
            }
            int twoSeconds = 0;
            for (; t < grow + 2 * SECOND; t += STEP) {
                twoSeconds += spend(bucket, GROWN, t) ? 1 : 0;
            }
            assertThat(twoSeconds).as("admitted in the 2 s after a grow %d ms into the old rate's cycle", phase * 50)
                    .isBetween(17, 19);
        }
    }

    @Test
    void anIdleBucketGrowsFromItsOldCapacity() {
        BucketState bucket = BucketState.create(SMALL, 0);
        assertThat(spend(bucket, SMALL, 0)).isTrue();
        int admitted = 0;
        for (long t = 8 * SECOND; t < 9 * SECOND; t += STEP) {
            admitted += spend(bucket, GROWN, t) ? 1 : 0;
        }
        assertThat(admitted).as("5 held on the old share, then 9/s").isBetween(13, 14);
    }

    @Test
    void whatABucketOwesTheStoreAcrossARateChangeCountsTheTimeBeforeItAtTheOldRate() {
        BucketState bucket = BucketState.create(SMALL, 0);
        for (int i = 0; i < 5; i++) {
            assertThat(spend(bucket, SMALL, 0)).isTrue();
        }
        // 1 s at 0.5/s untouched would have refilled 0.5 of the 5 spent: it owes 4.5, whatever the rate is now.
        BucketState.Owed owed = bucket.settleOwed(GROWN, SECOND);
        assertThat(owed.current()).isCloseTo(5 - 0.5, offset(1e-9));
    }

    private static boolean spend(BucketState bucket, Limit limit, long nowNanos) {
        BucketState.Preview preview = bucket.preview(limit, 1, nowNanos);
        if (preview.allowed()) {
            bucket.commit(preview);
        }
        return preview.allowed();
    }
}

package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.testsupport.RedisServerExtension;
import io.lettuce.core.ScriptOutputType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A region's share of a global token bucket changing under a client that keeps sending (issue 36, the grow burst):
 * a global limit of 100 per 10 s, the region at 5 (0.5 tokens/s) with a client at 20 requests/s, then grown to 90
 * (9 tokens/s). Measured with three gateways before the fix: 20 and 13 admitted in the first two seconds against 9/s,
 * because the script credited the time since the last admission (up to 1 / old rate = 2 s) at the new rate at once.
 *
 * <p>Deterministic: every call is placed at its own point on a simulated store clock with the script's clock shift
 * (re-read before each call, so real time adds at most the call's own few hundred microseconds), the share change is a
 * change of the limit the calls carry, as {@code RegionShares.ruleFor} makes it, and the grow is tried at every phase
 * of the old rate's 2 s cycle.
 */
class ShareGrowBurstTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final TokenBucketLimit GLOBAL = TokenBucketLimit.of("test.", 100, 100, Duration.ofSeconds(10));
    private static final TokenBucketLimit SMALL = GLOBAL.share(5);
    private static final TokenBucketLimit GROWN = GLOBAL.share(90);
    /** The client's pace: a request every 50 ms (20/s, 2 × the global limit). */
    private static final long STEP_US = 50_000;

    private static TestConnection connection;
    /** The simulated clock's origin, far from the server's own time so that nothing depends on it. */
    private long origin;

    @BeforeAll
    static void connect() {
        connection = TestConnection.open(redis.host(), redis.port());
    }

    @AfterAll
    static void disconnect() {
        connection.close();
    }

    @BeforeEach
    void flush() {
        redis.command("FLUSHALL");
        origin = serverNow() + 3_600_000_000L;
    }

    @Test
    void theSharesAreWhatTheRegionsGet() {
        assertThat(SMALL.capacity()).isEqualTo(5);
        assertThat(SMALL.tokensPerSecond()).isEqualTo(0.5);
        assertThat(GROWN.capacity()).isEqualTo(90);
        assertThat(GROWN.tokensPerSecond()).isEqualTo(9.0);
    }

    /**
     * The documented bound: in the first {@code s} seconds after the grow, at most the level the bucket held on its
     * old share (about 1 token at most, as it was refusing) plus {@code 9 × s}: at most 10 in the first second and 19
     * in the first two (before the fix: up to 18 more). And no fewer than the new rate gives from the grow on: the grow
     * is not held back by the old rate.
     */
    @Test
    void aGrownShareAdmitsNoMoreThanItsNewRateFromTheGrowOnWhateverThePhase() throws Exception {
        int worstFirstSecond = 0;
        int worstTwoSeconds = 0;
        for (int phase = 0; phase < 40; phase++) {
            String key = "grow-" + phase;
            long t = 0;
            // 10 s on the small share: the 5 banked tokens go at once, then one every 2 s.
            for (; t < 10_000_000; t += STEP_US) {
                call(key, t, SMALL);
            }
            long grow = 10_000_000 + phase * STEP_US;
            for (; t < grow; t += STEP_US) {
                call(key, t, SMALL);
            }
            int firstSecond = 0;
            int twoSeconds = 0;
            for (; t < grow + 2_000_000; t += STEP_US) {
                boolean admitted = call(key, t, GROWN);
                firstSecond += admitted && t < grow + 1_000_000 ? 1 : 0;
                twoSeconds += admitted ? 1 : 0;
            }
            assertThat(firstSecond).as("admitted in the first second after a grow %d ms into the cycle", phase * 50)
                    .isLessThanOrEqualTo(10);
            assertThat(twoSeconds).as("admitted in the first two seconds after a grow %d ms into the cycle",
                    phase * 50).isBetween(17, 19);
            worstFirstSecond = Math.max(worstFirstSecond, firstSecond);
            worstTwoSeconds = Math.max(worstTwoSeconds, twoSeconds);
        }
        // The phases span the old rate's whole cycle: the new rate is in force from the grow on in every one of them.
        assertThat(worstTwoSeconds).isGreaterThanOrEqualTo(18);
        assertThat(worstFirstSecond).isGreaterThanOrEqualTo(9);
    }

    /**
     * A region idle on its share of 5 (full again: 5 tokens) that grows to 90 starts from those 5, its old capacity,
     * not from what 8 s at the old rate would add to its last write without that cap (8): at most 5 + 9 in the first
     * second.
     */
    @Test
    void anIdleBucketGrowsFromItsOldCapacity() throws Exception {
        assertThat(call("idle", 0, SMALL)).isTrue(); // 4 left, written at 0
        int admitted = 0;
        for (long t = 8_000_000; t < 9_000_000; t += STEP_US) {
            admitted += call("idle", t, GROWN) ? 1 : 0;
        }
        assertThat(admitted).as("admitted in the first second after an idle bucket grew").isBetween(13, 14);
    }

    /** A shrink (90 → 5) caps the bucket at its new capacity at once: a full bucket of 90 lets 5 through, then 0.5/s. */
    @Test
    void aShrunkShareAdmitsItsNewCapacityAndRateAtOnce() throws Exception {
        long t = 0;
        assertThat(call("shrink", t, GROWN)).isTrue();
        t += 20_000_000; // full again
        int admitted = 0;
        for (long end = t + 2_000_000; t < end; t += STEP_US) {
            admitted += call("shrink", t, SMALL) ? 1 : 0;
        }
        assertThat(admitted).as("admitted in the 2 s after a shrink to 5 of a full bucket").isEqualTo(5);
    }

    /**
     * The instances of one region apply a share record moments apart, so for a while calls on both rates reach the
     * bucket. Alternating, each call credits the time since the last at the lower rate: 10 s of it admit what the
     * small share allows (its 5 banked, 0.5/s), not what either rate alone would.
     */
    @Test
    void instancesDisagreeingOnTheShareRefillTheBucketAtTheLowerRate() throws Exception {
        int admitted = 0;
        long t = 0;
        for (int i = 0; t < 10_000_000; i++, t += STEP_US) {
            admitted += call("disagree", t, i % 2 == 0 ? SMALL : GROWN) ? 1 : 0;
        }
        // First call on the small share (5 banked; 4 left at 0.5/s), so at most 5 + 0.5 × 10 + the level's fraction.
        assertThat(admitted).as("admitted over 10 s of alternating shares 5 and 90").isBetween(9, 10);
    }

    /** One request of cost 1 at {@code atUs} on the simulated clock; whether it was admitted. */
    private boolean call(String key, long atUs, TokenBucketLimit limit) throws Exception {
        long shift = origin + atUs - serverNow();
        List<String> args = new ArrayList<>(List.of("1000", String.valueOf(shift), "0", "1", "1", "t",
                Long.toString(limit.capacity()), Double.toString(limit.tokensPerSecond()), "1", "0"));
        List<Long> reply = connection.connection().<List<Long>>script(LimiterScript.RATE_LIMIT,
                ScriptOutputType.MULTI, new String[] { "rl:grow:" + key }, args.toArray(String[]::new))
                .get(5, TimeUnit.SECONDS);
        return reply.get(0) == 1L;
    }

    private static long serverNow() {
        return RedisTime.micros(redis);
    }
}

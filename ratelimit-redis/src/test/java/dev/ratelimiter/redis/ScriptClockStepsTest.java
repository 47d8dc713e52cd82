package dev.ratelimiter.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.testsupport.RedisServerExtension;
import io.lettuce.core.ScriptOutputType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * rate_limit.lua against store clocks that step back and forth, placed at absolute positions with the script's clock
 * shift (shift = target - TIME): randomized sequences against the bounds a token bucket promises, and the steps
 * that sit on a state's lifetime.
 */
class ScriptClockStepsTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static TestConnection connection;

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
    }

    /**
     * A sliding window emptied at the end of its window w, then a step back to the start of window w-2: 3 windows less
     * 30 ms, longer than the state's lifetime. Before, the stored window was waited out (w - index = 2 was not
     * repaired): refused for more than 3 windows.
     */
    @Test
    void aSlidingWindowIsRefusedNoLongerThanTwoWindowsAfterAStepBackLongerThanThat() throws Exception {
        long windowUs = 500_000;
        long t0 = serverNow();
        long w = t0 / windowUs + 10;
        long a = (w + 1) * windowUs - 20_000; // 20 ms before the end of window w
        int allowed = 0;
        for (int i = 0; i < 5; i++) {
            allowed += window("sw", a - t0, 5, 500) ? 1 : 0;
        }
        assertThat(allowed).isEqualTo(5);
        long b = (w - 2) * windowUs + 10_000; // 10 ms into window w-2
        long stepUs = a - b;
        long refusedUs = -1;
        for (long k = 0; k <= 120; k++) {
            long clock = b + k * 25_000;
            if (window("sw", clock - t0, 5, 500)) {
                refusedUs = clock - b;
                break;
            }
        }
        assertThat(stepUs).isGreaterThan(2 * windowUs);
        assertThat(refusedUs).as("refused (ms) after a step back longer than two windows").isBetween(0L,
                2 * windowUs + 50_000);
    }

    /**
     * Random clock sequences against a token bucket (capacity 5, 1 token per 10 s, fill 50 s): for every window of
     * calls, admitted cost <= capacity + rate * forward clock movement in the window (+ real time, tiny at this
     * rate); and after a monotone forward movement of 2 fill times a request of cost <= capacity is admitted.
     */
    @Test
    void randomClockSequencesNeverAdmitMoreThanTheCapacityAndTheForwardRefillAndNeverStick() throws Exception {
        double capacity = 5;
        double rate = 0.1; // tokens per second
        long fillUs = (long) (capacity / rate * 1_000_000);
        long worstOver = Long.MIN_VALUE;
        String worst = "";
        int violationsP2 = 0;
        String firstP2 = "";
        for (int seed = 1; seed <= 40; seed++) {
            redis.command("FLUSHALL");
            Random random = new Random(seed);
            long t0 = serverNow();
            long base = t0 + 1_000_000_000_000L;
            int n = 120;
            long[] clock = new long[n];
            int[] cost = new int[n];
            boolean[] ok = new boolean[n];
            long c = base;
            for (int i = 0; i < n; i++) {
                double r = random.nextDouble();
                long delta;
                if (r < 0.55) {
                    delta = (long) (random.nextDouble() * fillUs / 5);
                }
                else if (r < 0.75) {
                    delta = -(long) (random.nextDouble() * fillUs * 3);
                }
                else if (r < 0.85) {
                    delta = (long) (random.nextDouble() * fillUs * 3);
                }
                else {
                    delta = 0;
                }
                c += i == 0 ? 0 : delta;
                clock[i] = c;
                cost[i] = 1 + random.nextInt(5);
                ok[i] = bucket("rnd", c - t0, (long) capacity, rate, cost[i]);
            }
            // P1: every window of calls (i..j]: tokens at call i+1 <= capacity, then refill only by forward moves.
            for (int i = 0; i < n; i++) {
                double forward = 0;
                long admitted = 0;
                for (int j = i; j < n; j++) {
                    if (j > i) {
                        forward += Math.max(0, clock[j] - clock[j - 1]);
                    }
                    admitted += ok[j] ? cost[j] : 0;
                    double bound = capacity + rate * forward / 1_000_000 + 0.2;
                    long over = (long) Math.floor(admitted - bound);
                    if (admitted > bound && over >= worstOver) {
                        worstOver = over;
                        worst = "seed " + seed + " calls " + i + ".." + j + ": admitted " + admitted + " > bound "
                                + bound;
                    }
                }
            }
            // P2: monotone forward by >= 2 fill times from call s to j, nothing admitted in between: j must be admitted.
            for (int j = 1; j < n; j++) {
                for (int s = j - 1; s >= 0 && clock[s + 1] >= clock[s] && (s + 1 == j || !ok[s + 1]); s--) {
                    if (clock[j] - clock[s] >= 2 * fillUs + 1_000_000 && !ok[j]) {
                        violationsP2++;
                        if (firstP2.isEmpty()) {
                            firstP2 = "seed " + seed + " call " + j + " refused after " + (clock[j] - clock[s]) / 1000
                                    + " ms of forward clock";
                        }
                        break;
                    }
                }
            }
        }
        assertThat(worst).as("over-admission").isEmpty();
        assertThat(violationsP2).as(firstP2).isZero();
    }

    /**
     * Concurrency (max 2, lease 1 s): a permit taken on a server 1 h ahead, by an instance that then died. Back on the
     * right clock, while a live permit keeps the key alive, the dead one must count for about one lease, not for the
     * hour the clock stepped (before: a third permit was refused 10 times of 10 over 5 s).
     */
    @Test
    void aDeadPermitStampedOnAClockAheadHoldsItsPlaceForOneLeaseNotForTheStep() throws Exception {
        long hourUs = 3_600_000_000L;
        assertThat(permit("c", hourUs, 2, 1_000, "dead")).isTrue();
        assertThat(permit("c", 0, 2, 1_000, "live")).isTrue();
        int refused = 0;
        for (int i = 0; i < 10; i++) {
            Thread.sleep(500);
            assertThat(permit("c", 0, 2, 1_000, "live")).as("renewal").isTrue();
            boolean third = permit("c", 0, 2, 1_000, "other-" + i);
            refused += third ? 0 : 1;
            if (third) {
                redis.command("ZREM", "rl:steps:c", "other-" + i);
            }
        }
        assertThat(refused).as("third permits refused over 5 s (half-second steps, 1 s leases)").isLessThanOrEqualTo(3);
    }

    private static boolean permit(String key, long shiftUs, long max, long leaseMs, String id) throws Exception {
        return call(key, new ArrayList<>(List.of("1000", String.valueOf(shiftUs), "0", "1", "1", "c", String.valueOf(max),
                String.valueOf(leaseMs), id, "0")));
    }

    private static boolean bucket(String key, long shiftUs, long capacity, double perSecond, int cost)
            throws Exception {
        List<String> args = new ArrayList<>(List.of("1000", String.valueOf(shiftUs), "0", "1", "1", "t",
                String.valueOf(capacity), String.valueOf(perSecond), String.valueOf(cost), "0"));
        return call(key, args);
    }

    private static boolean window(String key, long shiftUs, long limit, long windowMs) throws Exception {
        List<String> args = new ArrayList<>(List.of("1000", String.valueOf(shiftUs), "0", "1", "1", "w",
                String.valueOf(limit), String.valueOf(windowMs), "1", "0"));
        return call(key, args);
    }

    private static boolean call(String key, List<String> args) throws Exception {
        List<Long> reply = connection.connection().<List<Long>>script(LimiterScript.RATE_LIMIT,
                ScriptOutputType.MULTI, new String[] { "rl:steps:" + key }, args.toArray(String[]::new))
                .get(5, TimeUnit.SECONDS);
        return reply.get(0) == 1L;
    }

    private static long serverNow() {
        return RedisTime.micros(redis);
    }
}

package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.testsupport.RedisServerExtension;
import io.lettuce.core.ScriptOutputType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The rate-limit script at its edges, in a real Redis: keys of another type, a store clock that steps back (played
 * with the script's clock shift), and numbers too large to keep — each must leave decisions working and the store
 * consistent.
 */
class RateLimitScriptEdgesTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final RedisKeys keys = new RedisKeys("rl");
    private static TestConnection connection;
    private static RedisRateLimitStore store;

    @BeforeAll
    static void connect() {
        connection = TestConnection.open(redis.host(), redis.port());
        store = new RedisRateLimitStore(connection.connection(), keys, false);
    }

    @AfterAll
    static void disconnect() {
        connection.close();
    }

    @BeforeEach
    void flush() {
        redis.command("FLUSHALL");
    }

    @Test
    void aKeyOfAnotherTypeIsDroppedAndStartsAfreshInsteadOfFailingEveryDecision() {
        Rule bucket = rule("bucket", TokenBucketLimit.of("b.", 5, 1, Duration.ofHours(1)));
        Rule window = rule("window", SlidingWindowLimit.of("w.", 5, Duration.ofHours(1)));
        Rule permits = rule("permits", ConcurrencyLimit.of("p.", 2, Duration.ofSeconds(30)));
        String client = ClientIds.unkeyed().of("typed");
        redis.command("ZADD", keys.bucket(new BucketKey(client, "bucket")), "1", "x");
        redis.command("SET", keys.bucket(new BucketKey(client, "window")), "garbage");
        redis.command("HSET", keys.bucket(new BucketKey(client, "permits")), "t", "3");
        Verdict verdict = store.evaluate(List.of(new Check(bucket, new BucketKey(client, "bucket"), 1, false),
                new Check(window, new BucketKey(client, "window"), 1, false),
                new Check(permits, new BucketKey(client, "permits"), 1, false, new RequestPermits())))
                .block(Duration.ofSeconds(5));
        assertThat(verdict.allowed()).isTrue();
        assertThat(verdict.outcomes()).extracting(o -> o.remaining()).containsExactly(4L, 4L, 1L);
        assertThat(redis.command("TYPE", keys.bucket(new BucketKey(client, "permits"))).trim()).isEqualTo("zset");
    }

    @Test
    void aTokenBucketNeverCreditsTheSameIntervalTwiceWhenTheClockStepsBack() throws Exception {
        // Fills in 10 s: a step back of 3 s is waited out.
        Check check = check(rule("tb", TokenBucketLimit.of("tb.", 10, 1, Duration.ofSeconds(1))));
        assertThat(spend(check, 0, 5)).isEqualTo(5);
        // The store fails over to a server 3 s behind: one more request there, then the clock is back.
        assertThat(spend(check, -3_000_000, 1)).isEqualTo(1);
        int afterwards = spend(check, 0, 10);
        assertThat(afterwards).as("4 left, plus what refilled in the milliseconds the test took; crediting the 3 s "
                + "again would give 7").isBetween(4, 5);
    }

    @Test
    void aTokenBucketPausesAtMostForTheStepAndSaysHowLong() throws Exception {
        Check check = check(rule("pause", TokenBucketLimit.of("p.", 10, 1, Duration.ofSeconds(1))));
        assertThat(spend(check, 0, 10)).isEqualTo(10);
        List<Long> refused = call(check, -2_000_000);
        assertThat(refused.get(1)).as("refused while the clock is behind").isZero();
        // Less whatever real time passed between the two calls.
        assertThat(refused.get(3)).as("retry after: the 2 s step plus one token's second")
                .isBetween(2_500_000L, 3_050_000L);
        assertThat(spend(check, 1_200_000, 10)).as("1.2 s past the step: one token back, not stuck").isBetween(1, 2);
    }

    @Test
    void aSlidingWindowStepsBackIntoItsOwnWindowNeverIntoAFreshOne() throws Exception {
        Check check = check(rule("sw", SlidingWindowLimit.of("sw.", 5, Duration.ofSeconds(10))));
        assertThat(spend(check, 0, 5)).isEqualTo(5);
        assertThat(spend(check, -15_000_000, 5)).as("15 s back, in an earlier window: still counted").isZero();
        assertThat(spend(check, 21_000_000, 5)).as("two windows later the limit is whole again").isEqualTo(5);
    }

    @Test
    void aStampFarAheadOfTheClockIsNotWaitedFor() throws Exception {
        Check bucket = check(rule("far", TokenBucketLimit.of("far.", 10, 1, Duration.ofSeconds(1))));
        assertThat(spend(bucket, 3_600_000_000L, 5)).isEqualTo(5);
        assertThat(spend(bucket, 0, 10)).as("an hour back: the 5 left, nothing fresh, nothing waited for")
                .isBetween(5, 6);
        Check window = check(rule("far-window", SlidingWindowLimit.of("fw.", 5, Duration.ofSeconds(1))));
        assertThat(spend(window, 3_600_000_000L, 3)).isEqualTo(3);
        assertThat(spend(window, 0, 5)).as("counted on from here with the 3 already spent").isEqualTo(2);
    }

    @Test
    void anEmptyBucketIsRefusedNoLongerThanItsFillTimeAfterTheClockStepsBackFurther() throws Exception {
        // Fills in 10 s; emptied on a server 50 s ahead, then on one that is not.
        Check bucket = check(rule("stuck", TokenBucketLimit.of("stuck.", 10, 1, Duration.ofSeconds(1))));
        assertThat(spend(bucket, 50_000_000, 10)).isEqualTo(10);
        assertThat(spend(bucket, 0, 1)).as("empty: refused").isZero();
        // 3 s on the new clock refill 3 tokens. Before, the refusal wrote nothing: every call found the time 50 s
        // ahead again and refused, until the old clock was reached.
        assertThat(spend(bucket, 3_000_000, 10)).as("3 s of refill after the step back").isBetween(3, 4);
        // Exhausted on a server 10 s ahead: two windows (1 s) on the new clock, the limit is whole again.
        Check window = check(rule("stuck-window", SlidingWindowLimit.of("sw.", 5, Duration.ofMillis(500))));
        assertThat(spend(window, 10_000_000, 5)).isEqualTo(5);
        assertThat(spend(window, 0, 1)).isZero();
        assertThat(spend(window, 1_000_000, 5)).as("two windows after the step back").isEqualTo(5);
    }

    @Test
    void numbersTooLargeToStoreFailTheScriptBeforeAnythingIsWritten() {
        String fine = keys.bucket(new BucketKey(ClientIds.unkeyed().of("huge"), "fine"));
        String huge = keys.bucket(new BucketKey(ClientIds.unkeyed().of("huge"), "huge"));
        // What a rule of capacity 2^63 - 1 refilled at 1/s asked of the script before it was refused at validation.
        String[] arguments = { "1000", "0", "0", "1", "2", "t", "10", "10", "1", "0", "t", "9223372036854775807", "1",
            "1", "0" };
        assertThatThrownBy(() -> connection.connection().<List<Long>>script(LimiterScript.RATE_LIMIT,
                ScriptOutputType.MULTI, new String[] { fine, huge }, arguments).get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasMessageContaining("would live");
        assertThat(redis.command("EXISTS", fine).trim()).as("the first check's write was not made").isEqualTo("0");
        assertThat(redis.command("EXISTS", huge).trim()).isEqualTo("0");
    }

    /**
     * Spends {@code requests} with the store clock shifted, in one script call (one reading of the clock, so that no
     * real time refills between them however loaded the machine is); returns how many were allowed.
     */
    private static int spend(Check check, long shiftMicros, int requests) throws Exception {
        List<Long> reply = call(check, shiftMicros, requests);
        int allowed = 0;
        for (int r = 0; r < requests; r++) {
            allowed += reply.get(r * 5) == 1L ? 1 : 0;
        }
        return allowed;
    }

    /** One script call for one check with the store's clock shifted; the script's reply. */
    private static List<Long> call(Check check, long shiftMicros) throws Exception {
        return call(check, shiftMicros, 1);
    }

    /** One script call of {@code requests} requests, each of the one check; per request 5 numbers in the reply. */
    private static List<Long> call(Check check, long shiftMicros, int requests) throws Exception {
        // slack, clock shift, never stale, the number of requests; then per request: one check, its 5 arguments
        List<String> arguments = new ArrayList<>(List.of("1000", String.valueOf(shiftMicros), "0",
                String.valueOf(requests)));
        String[] bucketKeys = new String[requests];
        for (int r = 0; r < requests; r++) {
            arguments.add("1");
            if (check.rule().limit() instanceof TokenBucketLimit bucket) {
                arguments.addAll(List.of("t", String.valueOf(bucket.capacity()),
                        String.valueOf(bucket.tokensPerSecond())));
            }
            else {
                SlidingWindowLimit window = (SlidingWindowLimit) check.rule().limit();
                arguments.addAll(List.of("w", String.valueOf(window.limit()),
                        String.valueOf(window.window().toMillis())));
            }
            arguments.addAll(List.of("1", "0"));
            bucketKeys[r] = keys.bucket(check.bucket());
        }
        return connection.connection().<List<Long>>script(LimiterScript.RATE_LIMIT, ScriptOutputType.MULTI,
                bucketKeys, arguments.toArray(String[]::new)).get(5, TimeUnit.SECONDS);
    }

    private static Check check(Rule rule) {
        return new Check(rule, new BucketKey(ClientIds.unkeyed().of("clock"), rule.id()), 1, false);
    }

    private static Rule rule(String id, dev.ratelimiter.core.Limit limit) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY), limit, 0, Mode.ENFORCE, FailureMode.LOCAL);
    }
}

package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.CalendarQuotaLimit;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.StoreMode;
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
 * Attacks on the accuracy of calendar quotas (review r35c): a quota is a hard count per period, so anything that lets
 * the counts of one period sum above the limit is an over-admission that lasts until the boundary (a month), not one
 * window.
 */
class CalendarQuotaAccuracyAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final Map<String, Double> TWO = Map.of("us-east-1", 1.0, "eu-central-1", 1.0);
    private static TestConnection connection;
    /** Each region's own Redis, played by a key prefix of its own on one server. */
    private static RedisRateLimitStore usStore;
    private static RedisRateLimitStore euStore;

    @BeforeAll
    static void connect() {
        connection = TestConnection.open(redis.host(), redis.port());
        usStore = new RedisRateLimitStore(connection.connection(), new RedisKeys("us"), false, Duration.ofSeconds(2));
        euStore = new RedisRateLimitStore(connection.connection(), new RedisKeys("eu"), false, Duration.ofSeconds(2));
    }

    @AfterAll
    static void disconnect() {
        connection.close();
    }

    @BeforeEach
    void flush() {
        redis.command("FLUSHALL");
    }

    /** Admits requests of cost 1 in one region, on the share it holds now, until that region refuses; how many. */
    private static int spendUntilRefused(RedisRateLimitStore store, RegionShares shares, Rule rule, BucketKey bucket) {
        int admitted = 0;
        for (int i = 0; i < 10_000; i++) {
            Verdict verdict = store.evaluate(List.of(new Check(shares.ruleFor(rule, bucket), bucket, 1, false)))
                    .block(Duration.ofSeconds(5));
            if (!verdict.allowed()) {
                return admitted;
            }
            admitted++;
        }
        return admitted;
    }

    /**
     * A global monthly quota of 100 over two regions (50 / 50). The client uses its share in us-east-1, which refuses;
     * the rebalancer moves eu-central-1's unused quota there (90 / 10). Then the client's traffic moves to
     * eu-central-1, which refuses at its 10; us-east-1 is idle now, so the rebalancer moves its quota back (10 / 90).
     * The shares in force sum to 100 at every moment — but each region's count for the month stays, so the client is
     * admitted 90 in us-east-1 and 90 in eu-central-1: 180 of a quota of 100, for the whole month. (A sliding window
     * forgets its count after a window; a calendar quota's count is there until the boundary.)
     */
    @Test
    void aGlobalCalendarQuotaIsRefusedSinceMovedSharesWouldAdmitMoreThanItsLimitInOnePeriod() {
        // Played before the refusal with two regions (50/50, then 90/10 toward us-east-1, then 10/90 toward
        // eu-central-1), spending each region's share until refused: 180 admitted in one month under a quota of 100.
        assertThatThrownBy(() -> new Rule("monthly", "monthly", Match.ANY, List.of(Dimension.API_KEY),
                CalendarQuotaLimit.of("monthly.", 100, "month", "UTC", null, null), 0, Mode.ENFORCE,
                FailureMode.LOCAL, StoreMode.EXACT, 1, null, Scope.GLOBAL))
                .isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("rule 'monthly' counts per calendar period")
                .hasMessageContaining("Use scope regional");
    }

    /**
     * A tenant's monthly quota of 100 split into 16 shards (hot-key protection): "each holding limit ÷ shards" — but
     * each shard is rounded up to 7, and 16 × 7 = 112. The tenant's 64 callers, hashed over the shards, are admitted
     * 112 in the month. For a rate this is 12 % over per window; for a quota it is 12 requests (12 %) the period's
     * hard count was promised never to pass.
     */
    @Test
    void aShardedCalendarQuotaNeverAdmitsMoreThanItsLimitInOnePeriod() {
        Rule rule = new Rule("tenant-monthly", "tenant-monthly", Match.ANY, List.of(Dimension.TENANT),
                CalendarQuotaLimit.of("tenant-monthly.", 100, "month", "UTC", null, null), 0, Mode.ENFORCE,
                FailureMode.LOCAL, StoreMode.EXACT, 16);
        RuleSet rules = RuleSet.builder("free").rule(rule).build();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, usStore, ClientIds.unkeyed(), null);
        int admitted = 0;
        for (int caller = 0; caller < 64; caller++) {
            RequestAttributes request = new RequestAttributes("key-" + caller, null, "acme", "10.0.0.1", "api", "/a",
                    null, "free", 1);
            for (int i = 0; i < 200; i++) {
                Verdict verdict = evaluator.check(rules, request, new RequestPermits()).block(Duration.ofSeconds(5));
                if (!verdict.allowed()) {
                    break;
                }
                admitted++;
            }
        }
        assertThat(admitted).as("requests of one tenant admitted in one month under a quota of 100 in 16 shards")
                .isLessThanOrEqualTo(100);
    }

    /**
     * The store's clock steps back across a boundary (a failover to a replica whose clock is behind, as the script's
     * clock shift plays it). The period's key lives until its end plus the slack (a second), as the issue asks of a
     * quota ("its TTL at the boundary"): a step back within the slack finds the count and refuses; one of more than
     * the slack, run after the key went, finds no count and grants the period's quota again. That is the documented
     * bound (README, calendar quotas): unlike a token bucket, whose step back "credits no interval twice", a quota
     * re-grants a period when the clock steps back past the slack across its end.
     */
    @Test
    void aStoreClockSteppingBackAcrossABoundaryKeepsTheCountWithinTheSlackAndNotBeyondIt() throws Exception {
        String key = "rl:{clock}:daily:period";
        long now = serverMicros();
        long end = now + 300_000;
        String bounds = (now - 3_600_000_000L) + ":" + end;
        for (int i = 0; i < 10; i++) {
            assertThat(quotaCall(key, 0, bounds).get(0)).as("request %d of 10", i + 1).isEqualTo(1L);
        }
        assertThat(quotaCall(key, 0, bounds).get(0)).as("the eleventh, refused").isEqualTo(0L);
        // the period ends (waited for, not timed); the key is there for the slack
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (serverMicros() < end && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        long behind = serverMicros() - end + 200_000;
        if ("1".equals(redis.command("EXISTS", key).trim())) {
            assertThat(quotaCall(key, -behind, bounds).get(0)).as("a step back within the slack: the count is there")
                    .isEqualTo(0L);
        }
        while (!"0".equals(redis.command("EXISTS", key).trim()) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(redis.command("EXISTS", key).trim()).isEqualTo("0");
        // a failover to a server whose clock is 3 s behind: its time lies in the period again, whose key has gone
        long shift = -3_000_000L;
        assertThat(serverMicros() + shift).as("the store's time, back in the period").isLessThan(end);
        assertThat(quotaCall(key, shift, bounds).get(0)).as("the documented bound: the period granted again")
                .isEqualTo(1L);
    }

    /** One request of one calendar quota of 10 on the script's clock shifted by {@code shiftMicros}. */
    private static List<Long> quotaCall(String key, long shiftMicros, String bounds) throws Exception {
        List<String> args = List.of(String.valueOf(RedisRateLimitStore.TTL_SLACK_MILLIS), Long.toString(shiftMicros),
                "0", "1", "1", "q", "10", bounds, "1", "0");
        return connection.connection().<List<Long>>script(LimiterScript.RATE_LIMIT, ScriptOutputType.MULTI,
                new String[] { key }, args.toArray(String[]::new)).get(5, TimeUnit.SECONDS);
    }

    private static long serverMicros() {
        String[] parts = redis.command("TIME").trim().split("\\s+");
        return Long.parseLong(parts[0]) * 1_000_000 + Long.parseLong(parts[1]);
    }
}

package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/** The rate-limit script against a real Redis server. */
class RedisRateLimitStoreTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static TestConnection connection;
    private static RedisRateLimitStore store;
    private static RedisRateLimitStore splitStore;
    private static final RedisKeys keys = new RedisKeys("rl");

    @BeforeAll
    static void connect() {
        connection = TestConnection.open(redis.host(), redis.port());
        // Long enough that nothing times out on a loaded machine (400 decisions at once beside a busy suite once found
        // a call stale at the default 5 ms): these tests are about what the scripts decide, the timeouts have theirs.
        store = new RedisRateLimitStore(connection.connection(), keys, false, Duration.ofSeconds(2));
        splitStore = new RedisRateLimitStore(connection.connection(), keys, true, Duration.ofSeconds(2));
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
    void fullBucketAdmitsItsBurstThenRefusesWithRetryAndReset() {
        Rule rule = tokenBucket("free.default", 10, 5, Duration.ofSeconds(1));
        for (int i = 0; i < 10; i++) {
            RuleOutcome outcome = one(rule, "burst");
            assertThat(outcome.allowed()).isTrue();
            assertThat(outcome.remaining()).isEqualTo(9 - i);
        }
        RuleOutcome denied = one(rule, "burst");
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.remaining()).isZero();
        // 5 tokens/s: one token is at most 200 ms away, a full bucket at most 2 s.
        assertThat(denied.retryAfter()).isGreaterThan(Duration.ZERO).isLessThanOrEqualTo(Duration.ofMillis(200));
        assertThat(denied.resetAfter()).isGreaterThan(Duration.ofMillis(1_800)).isLessThanOrEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void refillsAtSubSecondGranularity() throws InterruptedException {
        // 4 tokens/s: after ~300 ms exactly one token is back. A whole-second refill would give none.
        Rule rule = tokenBucket("free.default", 4, 4, Duration.ofSeconds(1));
        for (int i = 0; i < 4; i++) {
            assertThat(one(rule, "refill").allowed()).isTrue();
        }
        assertThat(one(rule, "refill").allowed()).isFalse();
        Thread.sleep(300);
        assertThat(one(rule, "refill").allowed()).isTrue();
        assertThat(one(rule, "refill").allowed()).isFalse();
    }

    @Test
    void costSpendsSeveralTokens() {
        Rule rule = tokenBucket("free.default", 10, 1, Duration.ofHours(1));
        assertThat(evaluate(check(rule, "cost", 3)).outcomes().get(0).remaining()).isEqualTo(7);
        assertThat(evaluate(check(rule, "cost", 7)).outcomes().get(0).remaining()).isZero();
        RuleOutcome denied = evaluate(check(rule, "cost", 3)).outcomes().get(0);
        assertThat(denied.allowed()).isFalse();
        // 1 token per hour, 3 missing: about three hours.
        assertThat(denied.retryAfter()).isBetween(Duration.ofMinutes(179), Duration.ofHours(3));
    }

    @Test
    void everyKeyWrittenHasATtlOfItsStateLifetimePlusSlack() {
        one(tokenBucket("tb", 10, 5, Duration.ofSeconds(1)), "ttl");
        one(slidingWindow("sw", 100, Duration.ofSeconds(30)), "ttl");
        assertThat(pttl(keys.bucket(new BucketKey(ClientIds.unkeyed().of("ttl"), "tb"))))
                .isBetween(1_000L, 2_000L + RedisRateLimitStore.TTL_SLACK_MILLIS);
        assertThat(pttl(keys.bucket(new BucketKey(ClientIds.unkeyed().of("ttl"), "sw"))))
                .isBetween(59_000L, 60_000L + RedisRateLimitStore.TTL_SLACK_MILLIS);
        assertThat(redis.command("KEYS", "*").trim().split("\n")).hasSize(2)
                .allSatisfy(name -> assertThat(pttl(name)).isPositive());
    }

    @Test
    void allOrNothingOneDenyingRuleSpendsNoOtherRulesTokens() {
        Rule roomy = tokenBucket("roomy", 100, 1, Duration.ofHours(1));
        Rule tight = tokenBucket("tight", 2, 1, Duration.ofHours(1));
        for (int i = 0; i < 2; i++) {
            assertThat(evaluate(check(roomy, "k", 1), check(tight, "k", 1)).allowed()).isTrue();
        }
        for (int i = 0; i < 5; i++) {
            Verdict denied = evaluate(check(roomy, "k", 1), check(tight, "k", 1));
            assertThat(denied.allowed()).isFalse();
            assertThat(denied.outcomes().get(0).allowed()).isTrue();
            assertThat(denied.outcomes().get(0).remaining()).isEqualTo(98);
        }
        assertThat(one(roomy, "k").remaining()).isEqualTo(97);
    }

    @Test
    void shadowChecksNeverDenyAndSpendOnlyWhenTheyWouldAllow() {
        Rule shadow = rule("shadow", TokenBucketLimit.of("s.", 1, 1, Duration.ofHours(1)), Mode.SHADOW);
        Check check = new Check(shadow, new BucketKey(ClientIds.unkeyed().of("k"), "shadow"), 1, true);
        assertThat(evaluate(check).shadowDenials()).isEmpty();
        Verdict second = evaluate(check);
        assertThat(second.allowed()).isTrue();
        assertThat(second.shadowDenials()).hasSize(1);
    }

    @Test
    void tokenBucketAndHourlyQuotaOnOneRequestMustBothPass() {
        Rule burst = tokenBucket("burst", 5, 50, Duration.ofSeconds(1));
        Rule hourly = slidingWindow("hourly", 12, Duration.ofHours(1));
        int allowed = 0;
        for (int i = 0; i < 40; i++) {
            if (evaluate(check(burst, "both", 1), check(hourly, "both", 1)).allowed()) {
                allowed++;
            }
            sleep(25);
        }
        assertThat(allowed).as("the bucket refills fast enough; the hourly quota stops it at 12").isEqualTo(12);
        Verdict denied = evaluate(check(burst, "both", 1), check(hourly, "both", 1));
        assertThat(denied.outcomes().get(0).allowed()).as("the bucket would still allow").isTrue();
        assertThat(denied.outcomes().get(1).allowed()).isFalse();
        // Windows are aligned to the store's clock: the wait is the rest of this hour plus 1/12 of the next.
        assertThat(denied.outcomes().get(1).retryAfter()).isBetween(Duration.ofMinutes(5), Duration.ofMinutes(65));
    }

    @Test
    void aBurstStraddlingAWindowBoundaryAdmitsAtMostOnePointOneTimesTheLimit() {
        // A 5 s window, so that a burst of 150 script calls takes a small share of it even on a loaded machine: the
        // bound holds for a burst, and a slow burst would be a longer stretch of the window, which may admit more.
        Rule window = slidingWindow("window", 100, Duration.ofSeconds(5));
        // Shortly before a boundary of the store's clock: 85% into the window.
        sleepUntilWindowFraction(5_000, 0.85);
        int before = burst(window, 150);
        // Just after the boundary: 2% into the next window.
        sleepUntilWindowFraction(5_000, 0.02);
        int after = burst(window, 150);
        assertThat(before).isEqualTo(100);
        assertThat(before + after).as("a fixed window would admit 200").isLessThanOrEqualTo(110);
    }

    @Test
    void eightThreadsRacingForOneHundredTokensGetExactlyOneHundred() throws Exception {
        Rule rule = tokenBucket("race", 100, 1, Duration.ofHours(1));
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Callable<Integer>> workers = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                workers.add(() -> {
                    int allowed = 0;
                    for (int i = 0; i < 500; i++) {
                        allowed += one(rule, "race").allowed() ? 1 : 0;
                    }
                    return allowed;
                });
            }
            int total = 0;
            for (Future<Integer> result : threads.invokeAll(workers, 60, TimeUnit.SECONDS)) {
                total += result.get();
            }
            assertThat(total).isEqualTo(100);
        }
        finally {
            threads.shutdownNow();
        }
    }

    @Test
    void splitBySlotSendsOneScriptPerPartitionAndKeepsTheOrder() {
        Rule perClient = tokenBucket("per-client", 3, 1, Duration.ofHours(1));
        Rule perRoute = new Rule("per-route", "per-route", Match.ANY, List.of(Dimension.ROUTE),
                TokenBucketLimit.of("r.", 100, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        Check client = check(perClient, "k", 1);
        Check route = new Check(perRoute, new BucketKey(ClientIds.unkeyed().of("ROUTE=login"), "per-route"), 1, false);
        for (int i = 0; i < 3; i++) {
            Verdict verdict = splitStore.evaluate(List.of(client, route)).block(Duration.ofSeconds(5));
            assertThat(verdict.allowed()).isTrue();
            assertThat(verdict.outcomes().get(0).rule().id()).isEqualTo("per-client");
            assertThat(verdict.outcomes().get(1).remaining()).isEqualTo(99 - i);
        }
        assertThat(splitStore.evaluate(List.of(client, route)).block(Duration.ofSeconds(5)).allowed()).isFalse();
    }

    @Test
    void recoversFromNoscriptAfterScriptFlush() {
        Rule rule = tokenBucket("flush", 10, 1, Duration.ofHours(1));
        assertThat(one(rule, "noscript").remaining()).isEqualTo(9);
        redis.command("SCRIPT", "FLUSH");
        assertThat(one(rule, "noscript").remaining()).isEqualTo(8);
        assertThat(redis.command("SCRIPT", "EXISTS", LimiterScript.RATE_LIMIT.sha1()).trim()).isEqualTo("1");
    }

    @Test
    void recoversAfterARedisRestartWithAnEmptyStore() throws InterruptedException {
        Rule rule = tokenBucket("restart", 10, 1, Duration.ofHours(1));
        assertThat(one(rule, "restart").remaining()).isEqualTo(9);
        redis.server().restart();
        RuleOutcome afterRestart = null;
        // Lettuce reconnects on its own; give it a bounded number of tries.
        for (int attempt = 0; attempt < 50 && afterRestart == null; attempt++) {
            try {
                afterRestart = one(rule, "restart");
            }
            catch (RuntimeException reconnecting) {
                Thread.sleep(100);
            }
        }
        assertThat(afterRestart).isNotNull();
        assertThat(afterRestart.remaining()).as("state is gone with the restart; the script is reloaded").isEqualTo(9);
    }

    @Test
    void decisionsArrivingTogetherShareScriptCallsAndEachStaysAllOrNothing() {
        Rule shared = tokenBucket("shared", 100, 1, Duration.ofHours(1));
        Rule own = tokenBucket("own", 1, 1, Duration.ofHours(1));
        // Every third request comes from a client whose own bucket is already empty: refused, it must spend nothing
        // of the shared bucket even when decided in the same call as requests that pass.
        for (int c = 0; c < 400; c += 3) {
            evaluate(check(own, "client-" + c, 1));
        }
        long scriptsBefore = ScriptCalls.of(redis);
        List<Verdict> verdicts = reactor.core.publisher.Flux.range(0, 400)
                .flatMap(c -> store.evaluate(List.of(new Check(shared, new BucketKey(ClientIds.unkeyed().of("everyone"),
                        "shared"), 1, false), check(own, "client-" + c, 1))), 400)
                .collectList().block(Duration.ofSeconds(30));
        long scripts = ScriptCalls.of(redis) - scriptsBefore;
        long allowed = verdicts.stream().filter(Verdict::allowed).count();
        long refusedByOwn = verdicts.stream().filter(v -> !v.outcomes().get(1).allowed()).count();
        System.out.printf("400 decisions at once: %d script calls, %d allowed%n", scripts, allowed);
        assertThat(refusedByOwn).as("clients with an empty bucket of their own").isEqualTo(134);
        assertThat(allowed).as("the shared bucket of 100, none of it spent by refused requests").isEqualTo(100);
        assertThat(Double.parseDouble(redis.command("HGET", keys.bucket(new BucketKey(ClientIds.unkeyed().of("everyone"),
                "shared")), "t").trim())).as("tokens left in the shared bucket").isLessThan(1);
        assertThat(scripts).as("script calls for 400 decisions that arrived together").isLessThan(400);
    }


    /**
     * The seed budgets ~100 bytes per counter. Measured with MEMORY USAGE (which counts the key name, the value and
     * the allocator's overhead) for the key shapes the limiter writes.
     */
    @Test
    void memoryPerTrackedKeyIsAboutOneHundredBytes() {
        one(tokenBucket("free.default", 100, 10, Duration.ofSeconds(1)), "memory");
        one(slidingWindow("hourly", 1000, Duration.ofHours(1)), "memory");
        long tokenBucket = Long.parseLong(redis.command("MEMORY", "USAGE",
                keys.bucket(new BucketKey(ClientIds.unkeyed().of("memory"), "free.default"))));
        long slidingWindow = Long.parseLong(redis.command("MEMORY", "USAGE",
                keys.bucket(new BucketKey(ClientIds.unkeyed().of("memory"), "hourly"))));
        System.out.printf("MEMORY USAGE: token bucket %d bytes, sliding window %d bytes (%s)%n", tokenBucket,
                slidingWindow, redis.server().description());
        assertThat(tokenBucket).isLessThanOrEqualTo(160);
        assertThat(slidingWindow).isLessThanOrEqualTo(160);
    }

    private static int burst(Rule rule, int requests) {
        int allowed = 0;
        for (int i = 0; i < requests; i++) {
            allowed += one(rule, "edge").allowed() ? 1 : 0;
        }
        return allowed;
    }

    /** Sleeps until the Redis clock is at {@code fraction} of a window of {@code windowMillis}. */
    private static void sleepUntilWindowFraction(long windowMillis, double fraction) {
        String[] time = redis.command("TIME").trim().split("\n");
        long nowMicros = Long.parseLong(time[0]) * 1_000_000 + Long.parseLong(time[1]);
        long windowMicros = windowMillis * 1_000;
        long into = nowMicros % windowMicros;
        long target = (long) (fraction * windowMicros);
        long waitMicros = target >= into ? target - into : windowMicros - into + target;
        sleep(waitMicros / 1_000);
    }

    private static long pttl(String key) {
        return Long.parseLong(redis.command("PTTL", key));
    }

    private static RuleOutcome one(Rule rule, String client) {
        return evaluate(check(rule, client, 1)).outcomes().get(0);
    }

    private static Verdict evaluate(Check... checks) {
        return store.evaluate(List.of(checks)).block(Duration.ofSeconds(5));
    }

    private static Check check(Rule rule, String client, int cost) {
        return new Check(rule, new BucketKey(ClientIds.unkeyed().of(client), rule.id()), cost, false);
    }

    private static Rule tokenBucket(String id, long capacity, long tokens, Duration period) {
        return rule(id, TokenBucketLimit.of(id + ".", capacity, tokens, period), Mode.ENFORCE);
    }

    private static Rule slidingWindow(String id, long limit, Duration window) {
        return rule(id, SlidingWindowLimit.of(id + ".", limit, window), Mode.ENFORCE);
    }

    private static Rule rule(String id, Limit limit, Mode mode) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY), limit, 0, mode, FailureMode.LOCAL);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}

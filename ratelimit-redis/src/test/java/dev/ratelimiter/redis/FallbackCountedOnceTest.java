package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.StoreBreaker;
import dev.ratelimiter.core.StoreMetrics;
import dev.ratelimiter.core.StoreNotConnectedException;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.WithoutStore;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fallback's charge-back against a real Redis (found by the attack review of issue 30): every request is counted
 * once, by Redis or by the fallback, through pauses short and long; an honest client is never refused for it.
 */
class FallbackCountedOnceTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final RedisKeys keys = new RedisKeys("rl");
    private static TestConnection connection;

    @BeforeAll
    static void connect() {
        connection = TestConnection.open(redis.host(), redis.port());
        connection.connection().warmPrimaries(System.nanoTime() + Duration.ofSeconds(5).toNanos());
    }

    @AfterAll
    static void close() {
        connection.close();
    }

    @BeforeEach
    void flush() {
        redis.command("FLUSHALL");
    }

    /** The real exact stack's fail-safe part: Redis store (timeout, max-wait), fallback on this instance, charges. */
    private static FailSafeStore failSafe(RateLimitStore redisStore, Duration maxWait) {
        StoreBreaker breaker = new StoreBreaker("attack", StoreBreaker.Settings.DEFAULTS);
        WithoutStore withoutStore = new WithoutStore(new LocalBucketStore(1_000), () -> 1, StoreMetrics.NONE,
                WithoutStore.untilBreakerRetries(breaker), 1.0);
        return new FailSafeStore(redisStore, withoutStore, maxWait, breaker, StoreMetrics.NONE,
                new RedisFallbackCharges(connection.connection(), keys, false), System::nanoTime);
    }

    private static Verdict decide(RateLimitStore store, Check check) {
        return store.evaluate(List.of(check)).block(Duration.ofSeconds(10));
    }

    private static double tokens(Check check) {
        return Double.parseDouble(redis.command("HGET", keys.bucket(check.bucket()), "t").trim());
    }

    private static void awaitQuiet() throws InterruptedException {
        Thread.sleep(500); // the charge goes out on the background thread
    }

    /**
     * A call that the store timeout gave up on (so the request was decided by the fallback, which is charged back
     * for it) but that Redis still runs within the longest wait is counted twice: once by the late script, once by
     * the charge. Three requests, four tokens gone.
     */
    @Test
    void aRequestDecidedByTheFallbackAndRunLateByRedisIsCountedOnce() throws Exception {
        Rule rule = new Rule("twice", "twice", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("twice.", 10, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        Check check = new Check(rule, new BucketKey(ClientIds.unkeyed().of("c"), "twice@t"), 1, false);
        RedisRateLimitStore redisStore = new RedisRateLimitStore(connection.connection(), keys, false,
                Duration.ofMillis(50));
        FailSafeStore store = failSafe(redisStore, Duration.ofSeconds(2));

        assertThat(decide(store, check).source()).isEqualTo(Verdict.Source.STORE);
        redis.server().pause();
        Verdict during;
        try {
            during = decide(store, check);
            Thread.sleep(200); // Redis back well within the 2 s longest wait: the call it holds is not stale
        }
        finally {
            redis.server().resume();
        }
        assertThat(during.source()).as("decided by the fallback: the store timed out").isEqualTo(
                Verdict.Source.FALLBACK);
        assertThat(during.allowed()).isTrue();
        assertThat(decide(store, check).source()).isEqualTo(Verdict.Source.STORE);
        awaitQuiet();

        assertThat(Math.floor(tokens(check))).as("3 requests admitted, each counted once: 10 - 3").isEqualTo(7.0);
    }

    /**
     * Sliding window: the charge is everything the fallback admitted since the last answer, summed over every window
     * the outage spanned, and charge.lua adds it (up to one limit) to the window current when Redis answers again.
     * A client that never went above 40 % of its limit is refused after the outage.
     */
    @Test
    void anHonestSlidingWindowClientIsNotRefusedAfterAnOutageThatSpannedSeveralWindows() throws Exception {
        Duration window = Duration.ofSeconds(1);
        Rule rule = new Rule("win", "win", Match.ANY, List.of(Dimension.API_KEY),
                SlidingWindowLimit.of("win.", 100, window), 0, Mode.ENFORCE, FailureMode.LOCAL);
        Check check = new Check(rule, new BucketKey(ClientIds.unkeyed().of("honest"), "win@w"), 1, false);
        RedisRateLimitStore redisStore = new RedisRateLimitStore(connection.connection(), keys, false,
                Duration.ofMillis(200));
        AtomicBoolean down = new AtomicBoolean();
        // An outage as the limiter sees it when the connection is down: every call fails at once, nothing sent.
        RateLimitStore flaky = checks -> down.get()
                ? Mono.error(new StoreNotConnectedException("down")) : redisStore.evaluate(checks);
        FailSafeStore store = failSafe(flaky, Duration.ofSeconds(1));

        int refused = 0;
        int requests = 0;
        // 40 requests per 1 s window (40 % of the limit), spread: one every 25 ms, for 7 s.
        long start = System.nanoTime();
        long outageFrom = start + Duration.ofMillis(1_000).toNanos();
        long outageTo = start + Duration.ofMillis(4_000).toNanos();
        long end = start + Duration.ofMillis(7_000).toNanos();
        int refusedAfter = 0;
        for (long next = start; next < end; next += Duration.ofMillis(25).toNanos()) {
            long now = System.nanoTime();
            if (next > now) {
                Thread.sleep((next - now) / 1_000_000, (int) ((next - now) % 1_000_000));
            }
            down.set(next >= outageFrom && next < outageTo);
            Verdict verdict = decide(store, check);
            requests++;
            if (!verdict.allowed()) {
                refused++;
                if (next >= outageTo) {
                    refusedAfter++;
                }
            }
        }
        System.out.printf("sent %d, refused %d (%d after the outage)%n", requests, refused, refusedAfter);
        assertThat(requests).isGreaterThan(200);
        assertThat(refused).as("a client at 40 %% of its limit all along is never refused (%d refused after the "
                + "outage)", refusedAfter).isZero();
    }

    /**
     * An honest client at 80 % of its limit while Redis is paused for 40-80 ms now and then (well within the longest
     * wait, so every call held in Redis's input runs when it resumes): each request decided by the fallback during a
     * pause is counted by the late script and charged again, and the client is refused.
     */
    @Test
    void anHonestClientIsNotRefusedWhenShortPausesInterruptRedis() throws Exception {
        Rule rule = new Rule("short", "short", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("short.", 10, 50, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        Check check = new Check(rule, new BucketKey(ClientIds.unkeyed().of("honest"), "short@t"), 1, false);
        RedisRateLimitStore redisStore = new RedisRateLimitStore(connection.connection(), keys, false,
                Duration.ofMillis(20));
        FailSafeStore store = failSafe(redisStore, Duration.ofMillis(500));
        AtomicBoolean done = new AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger fallback = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger sent = new java.util.concurrent.atomic.AtomicInteger();
        Thread client = new Thread(() -> {
            long next = System.nanoTime();
            while (!done.get()) {
                Verdict verdict = decide(store, check);
                sent.incrementAndGet();
                if (!verdict.allowed()) {
                    refused.incrementAndGet();
                }
                if (verdict.source() == Verdict.Source.FALLBACK) {
                    fallback.incrementAndGet();
                }
                next += Duration.ofMillis(1000 / 40).toNanos(); // 40 a second: 80 % of the 50 a second allowed
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    try {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                    catch (InterruptedException ex) {
                        return;
                    }
                }
            }
        });
        client.start();
        java.util.Random random = new java.util.Random(3);
        try {
            long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (System.nanoTime() < end) {
                Thread.sleep(40 + random.nextInt(40));
                redis.server().pause();
                try {
                    Thread.sleep(40 + random.nextInt(40));
                }
                finally {
                    redis.server().resume();
                }
            }
        }
        finally {
            done.set(true);
            client.join();
        }
        System.out.printf("sent %d, decided by the fallback %d, refused %d%n", sent.get(), fallback.get(),
                refused.get());
        assertThat(refused.get()).as("a client at 80 %% of its limit is never refused (%d of %d sent, %d by the "
                + "fallback)", refused.get(), sent.get(), fallback.get()).isZero();
    }
}

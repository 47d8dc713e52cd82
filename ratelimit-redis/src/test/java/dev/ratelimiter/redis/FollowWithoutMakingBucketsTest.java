package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.StoreBreaker;
import dev.ratelimiter.core.StoreMetrics;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.WithoutStore;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On a healthy Redis every exact decision keeps the fallback up to date, on the Lettuce I/O thread that reads Redis's
 * answers: that must make no cache entry (a flood of new keys filled the fallback's cache there, and its write buffer
 * made the I/O thread spin), only remember the report in a fixed table. Found by the attack review of issue 30.
 */
class FollowWithoutMakingBucketsTest {

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

    @Test
    void aFloodOfNewKeysOnAHealthyRedisMakesNoFallbackBuckets() throws Exception {
        Rule rule = new Rule("flood", "flood", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("flood.", 10, 5, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        RedisRateLimitStore redisStore = new RedisRateLimitStore(connection.connection(), keys, false,
                Duration.ofMillis(200));
        StoreBreaker breaker = new StoreBreaker("flood", StoreBreaker.Settings.DEFAULTS);
        LocalBucketStore fallbackBuckets = new LocalBucketStore(100_000);
        WithoutStore withoutStore = new WithoutStore(fallbackBuckets, () -> 1, StoreMetrics.NONE,
                WithoutStore.untilBreakerRetries(breaker));
        FailSafeStore store = new FailSafeStore(redisStore, withoutStore, Duration.ofSeconds(1), breaker,
                StoreMetrics.NONE, new RedisFallbackCharges(connection.connection(), keys, false), System::nanoTime);

        int total = 60_000;
        Semaphore inFlight = new Semaphore(256);
        CountDownLatch done = new CountDownLatch(total);
        AtomicInteger fromStore = new AtomicInteger();
        for (int i = 0; i < total; i++) {
            inFlight.acquire();
            Check check = new Check(rule, new BucketKey(ClientIds.unkeyed().of("bot-" + i), "flood@t"), 1, false);
            store.evaluate(List.of(check)).subscribe(verdict -> {
                if (verdict.source() == Verdict.Source.STORE) {
                    fromStore.incrementAndGet();
                }
            }, failure -> {
                inFlight.release();
                done.countDown();
            }, () -> {
                inFlight.release();
                done.countDown();
            });
        }
        done.await();
        System.out.printf("from Redis %d of %d; fallback buckets held: %d; fallback decisions %d%n", fromStore.get(),
                total, fallbackBuckets.size(), store.fallbackDecisions());
        assertThat(fallbackBuckets.size()).as("buckets the fallback holds while Redis answered every decision")
                .isZero();
    }
}

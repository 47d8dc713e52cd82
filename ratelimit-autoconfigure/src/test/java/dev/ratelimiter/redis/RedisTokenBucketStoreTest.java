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
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Decision;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/** The token bucket script against a real Redis server. */
class RedisTokenBucketStoreTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static LettuceConnectionFactory connectionFactory;
    private static RedisTokenBucketStore store;
    private static final RedisKeys keys = new RedisKeys("rl");

    @BeforeAll
    static void connect() {
        connectionFactory = new LettuceConnectionFactory(redis.host(), redis.port());
        connectionFactory.afterPropertiesSet();
        connectionFactory.start();
        store = new RedisTokenBucketStore(new ReactiveStringRedisTemplate(connectionFactory), TokenBucketScript.load(),
                keys);
    }

    @AfterAll
    static void disconnect() {
        connectionFactory.destroy();
    }

    @BeforeEach
    void flush() {
        redis.command("FLUSHALL");
    }

    @Test
    void fullBucketAdmitsItsBurstThenRefusesWithRetryAndReset() {
        TokenBucketLimit limit = limit(10, 5, Duration.ofSeconds(1));
        BucketKey key = key("burst");
        for (int i = 0; i < 10; i++) {
            Decision decision = consume(key, limit, 1);
            assertThat(decision.allowed()).isTrue();
            assertThat(decision.remaining()).isEqualTo(9 - i);
            assertThat(decision.source()).isEqualTo(Decision.Source.STORE);
        }
        Decision denied = consume(key, limit, 1);
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.remaining()).isZero();
        // 5 tokens/s: one token is at most 200 ms away, a full bucket at most 2 s.
        assertThat(denied.retryAfter()).isGreaterThan(Duration.ZERO).isLessThanOrEqualTo(Duration.ofMillis(200));
        assertThat(denied.resetAfter()).isGreaterThan(Duration.ofMillis(1_800)).isLessThanOrEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void refillsAtSubSecondGranularity() throws InterruptedException {
        // 4 tokens/s: after ~300 ms exactly one token is back. A whole-second refill would give none.
        TokenBucketLimit limit = limit(4, 4, Duration.ofSeconds(1));
        BucketKey key = key("refill");
        for (int i = 0; i < 4; i++) {
            assertThat(consume(key, limit, 1).allowed()).isTrue();
        }
        assertThat(consume(key, limit, 1).allowed()).isFalse();
        Thread.sleep(300);
        assertThat(consume(key, limit, 1).allowed()).isTrue();
        assertThat(consume(key, limit, 1).allowed()).isFalse();
    }

    @Test
    void costSpendsSeveralTokens() {
        TokenBucketLimit limit = limit(10, 1, Duration.ofHours(1));
        BucketKey key = key("cost");
        Decision first = consume(key, limit, 3);
        assertThat(first.allowed()).isTrue();
        assertThat(first.remaining()).isEqualTo(7);
        assertThat(consume(key, limit, 7).remaining()).isZero();
        Decision denied = consume(key, limit, 3);
        assertThat(denied.allowed()).isFalse();
        // 1 token per hour, 3 missing: about three hours.
        assertThat(denied.retryAfter()).isBetween(Duration.ofMinutes(179), Duration.ofHours(3));
    }

    @Test
    void everyKeyWrittenHasATtlOfTheFillTimePlusSlack() {
        TokenBucketLimit limit = limit(10, 5, Duration.ofSeconds(1));
        consume(key("ttl"), limit, 1);
        String redisKey = keys.bucket(key("ttl"));
        long ttl = Long.parseLong(redis.command("PTTL", redisKey));
        assertThat(ttl).isBetween(2_000L, 2_000L + RedisTokenBucketStore.TTL_SLACK_MILLIS);
        assertThat(redis.command("KEYS", "*").trim().split("\n")).allSatisfy(
                name -> assertThat(Long.parseLong(redis.command("PTTL", name))).isPositive());
    }

    @Test
    void keyPutsTheClientInAHashTag() {
        assertThat(keys.bucket(key("demo"))).isEqualTo("rl:{" + ClientIds.of("demo") + "}:free.default");
    }

    @Test
    void eightThreadsRacingForOneHundredTokensGetExactlyOneHundred() throws Exception {
        TokenBucketLimit limit = limit(100, 1, Duration.ofHours(1));
        BucketKey key = key("race");
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Callable<Integer>> workers = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                workers.add(() -> {
                    int allowed = 0;
                    for (int i = 0; i < 500; i++) {
                        if (consume(key, limit, 1).allowed()) {
                            allowed++;
                        }
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
    void recoversFromNoscriptAfterScriptFlush() {
        TokenBucketLimit limit = limit(10, 1, Duration.ofHours(1));
        BucketKey key = key("noscript");
        assertThat(consume(key, limit, 1).remaining()).isEqualTo(9);
        redis.command("SCRIPT", "FLUSH");
        assertThat(consume(key, limit, 1).remaining()).isEqualTo(8);
        assertThat(redis.command("SCRIPT", "EXISTS", TokenBucketScript.load().getSha1()).trim()).isEqualTo("1");
    }

    @Test
    void recoversAfterARedisRestartWithAnEmptyStore() throws InterruptedException {
        TokenBucketLimit limit = limit(10, 1, Duration.ofHours(1));
        BucketKey key = key("restart");
        assertThat(consume(key, limit, 1).remaining()).isEqualTo(9);
        redis.server().restart();
        Decision afterRestart = null;
        // Lettuce reconnects on its own; give it a bounded number of tries.
        for (int attempt = 0; attempt < 50 && afterRestart == null; attempt++) {
            try {
                afterRestart = consume(key, limit, 1);
            }
            catch (RuntimeException reconnecting) {
                Thread.sleep(100);
            }
        }
        assertThat(afterRestart).isNotNull();
        assertThat(afterRestart.remaining()).as("state is gone with the restart; the script is reloaded").isEqualTo(9);
    }

    private static Decision consume(BucketKey key, TokenBucketLimit limit, int cost) {
        return store.tryConsume(key, limit, cost).block(Duration.ofSeconds(5));
    }

    private static BucketKey key(String client) {
        return new BucketKey(ClientIds.of(client), "free.default");
    }

    private static TokenBucketLimit limit(long capacity, long tokens, Duration period) {
        return TokenBucketLimit.builder("free.default").capacity(capacity).refill(tokens, period).build();
    }
}

package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntUnaryOperator;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.DenialCache;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LeaseStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.SettleLoop;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Local mode with three limiter instances in one JVM, each with its own shares and settle loop, sharing one real
 * Redis. Store calls are counted by Redis itself (INFO commandstats).
 */
class LocalModeTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final Duration SETTLE = Duration.ofMillis(100);

    /** A quota of 100 per second with a burst of 100. */
    private final Rule rule = new Rule("api", "api", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("api.", 100, 100, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
            StoreMode.LOCAL, 1);

    private final List<TestConnection> connections = new ArrayList<>();
    private final List<SettleLoop> loops = new ArrayList<>();
    private final List<LeaseStore> instances = new ArrayList<>();

    @BeforeEach
    void threeInstances() {
        redis.command("FLUSHALL");
        redis.command("CONFIG", "RESETSTAT");
        for (int i = 0; i < 3; i++) {
            TestConnection connection = TestConnection.open(redis.host(), redis.port());
            connections.add(connection);
            RedisKeys keys = new RedisKeys("rl");
            StoreStack stack = StoreStack.builder()
                    .sharedStore(new RedisRateLimitStore(connection.connection(), keys, false))
                    .settleClient(RedisSettleClient.settlingEvery(SETTLE, connection.connection(), keys, false))
                    .liveInstances(() -> 3)
                    .settleInterval(SETTLE)
                    .build();
            LeaseStore leases = stack.leases();
            SettleLoop loop = stack.settleLoop();
            loop.start();
            instances.add(leases);
            loops.add(loop);
        }
    }

    @AfterEach
    void stop() {
        loops.forEach(SettleLoop::stop);
        connections.forEach(TestConnection::close);
    }

    @Test
    void aClientSpreadEvenlyAtThreeTimesItsQuotaIsAdmittedAtItsQuota() {
        long admitted = drive(Duration.ofSeconds(10), 300, tick -> tick % 3, "even");
        System.out.printf("Even spread, 3x quota, 10 s: admitted %d (quota 100/s + burst 100 = 1100), %d decisions "
                + "by the fallback%n", admitted, fallbacks.get());
        assertThat(admitted).isBetween(990L, 1210L);
    }

    @Test
    void aSkewedClientWhoseTrafficMovesIsStillAdmittedAtItsQuota() {
        // 80/10/10 for 5 s, then 10/10/80.
        long first = drive(Duration.ofSeconds(5), 300, tick -> tick % 10 < 8 ? 0 : tick % 10 == 8 ? 1 : 2, "skewed");
        long second = drive(Duration.ofSeconds(5), 300, tick -> tick % 10 < 8 ? 2 : tick % 10 == 8 ? 1 : 0, "skewed");
        System.out.printf("Skewed 80/10/10 then moved, 3x quota, 10 s: admitted %d + %d = %d (1100 expected)%n",
                first, second, first + second);
        assertThat(first + second).isBetween(990L, 1210L);
    }

    @Test
    void storeCallsStayAtTheSettleRateAtTwentyThousandDecisionsPerSecond() {
        long callsBefore = ScriptCalls.of(redis);
        long start = System.nanoTime();
        long decisions = drive(Duration.ofSeconds(2), 20_000, tick -> tick % 3, null);
        double seconds = (System.nanoTime() - start) / 1e9;
        long calls = ScriptCalls.of(redis) - callsBefore;
        double perSecond = calls / seconds;
        // 3,000 active keys settle in calls of at most MAX_BUCKETS_PER_CALL buckets, whatever the traffic.
        long callsPerSettle = (3_000 + RedisSettleClient.MAX_BUCKETS_PER_CALL - 1) / RedisSettleClient.MAX_BUCKETS_PER_CALL;
        System.out.printf("%d decisions in %.1f s (%.0f/s) across 3 instances: %d store calls, %.1f/s "
                + "(settle rate x instances x calls per settle = %d/s)%n", total(), seconds, total() / seconds, calls,
                perSecond, 30 * callsPerSettle);
        // Not a throughput bound (the machine decides that): the traffic must outnumber the store calls by far, which
        // a store call per decision, or per few, would not.
        assertThat(total()).as("decisions per store call").isGreaterThanOrEqualTo(10 * Math.max(1, calls));
        assertThat(perSecond).as("store calls per second, whatever the traffic")
                .isLessThanOrEqualTo(33 * callsPerSettle);
        assertThat(decisions).isPositive();
    }

    @Test
    void aNoisyClientAtTwentyTimesItsQuotaIsRefusedLocallyAndStoreCallsDoNotGrow() {
        long callsBefore = ScriptCalls.of(redis);
        long start = System.nanoTime();
        long admitted = drive(Duration.ofSeconds(3), 2_000, tick -> tick % 3, "noisy");
        double seconds = (System.nanoTime() - start) / 1e9;
        long calls = ScriptCalls.of(redis) - callsBefore;
        System.out.printf("Noisy at 20x quota for 3 s: %d of %d admitted, %d store calls (%.1f/s)%n", admitted,
                total(), calls, calls / seconds);
        assertThat(admitted).isBetween(360L, 440L);
        assertThat(calls / seconds).isLessThanOrEqualTo(33);
    }

    @Test
    void aSparseClientThatPausesBetweenRequestsIsNeverRefused() {
        // Fewer requests than settles: the share is given back while idle and must still serve the next request.
        int allowed = 0;
        for (int i = 0; i < 12; i++) {
            Check check = new Check(rule, new BucketKey(ClientIds.unkeyed().of("sparse"), "api"), 1, false);
            allowed += instances.get(i % 3).decide(List.of(check)).allowed() ? 1 : 0;
            sleep(Duration.ofMillis(250));
        }
        assertThat(allowed).isEqualTo(12);
    }

    @Test
    void sparseClientsFirstSeenWhileRedisWasPausedAreNotRefusedWhenItDiesLater() {
        // Clients far under quota, first seen just before Redis is paused: the settles that time out then are applied
        // by Redis when it resumes, charging their provisional spend again and again and granting what nobody
        // receives. Their shares run dry; when Redis then dies, their next requests must still pass.
        Rule small = new Rule("api", "api", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("api.", 10, 10, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.LOCAL, 1);
        int refused = 0;
        try {
            refused += sparse(small, 100);
            redis.server().pause();
            sleep(Duration.ofMillis(3_000));
            redis.server().resume();
            sleep(Duration.ofMillis(1_000));
            redis.server().kill();
            refused += sparse(small, 100);
        }
        finally {
            if (!redis.server().isRunning()) {
                redis.server().restart();
            }
        }
        assertThat(refused).as("clients at 1 request per 4 s against a quota of 10/s refused").isZero();
    }

    @Test
    void aRequestCostingTheWholeBucketStillPassesSomewhereAcrossThreeInstances() {
        // A third of the bucket per instance is less than one request: without sizing shares by the requests they
        // serve, no instance ever holds enough and every request is refused everywhere.
        Rule whole = new Rule("whole", "whole", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("whole.", 10, 10, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.LOCAL, 1);
        Check check = new Check(whole, new BucketKey(ClientIds.unkeyed().of("costly"), "whole"), 10, false);
        int admitted = 0;
        long end = System.nanoTime() + Duration.ofSeconds(4).toNanos();
        for (int n = 0; System.nanoTime() < end; n++) {
            admitted += instances.get(n % 3).decide(List.of(check)).allowed() ? 1 : 0;
            sleep(Duration.ofMillis(20));
        }
        System.out.printf("Cost 10 against a bucket of 10 (10/s) over 3 instances for 4 s: %d admitted%n", admitted);
        // 1 a second from the refill, plus one provisional request per instance at first sight.
        assertThat(admitted).isBetween(3, 8);
    }

    /** One request of each of {@code clients} sparse clients on instance 0; returns how many were refused. */
    private int sparse(Rule small, int clients) {
        int refused = 0;
        for (int n = 0; n < clients; n++) {
            Check check = new Check(small, new BucketKey(ClientIds.unkeyed().of("sparse-" + n), "api"), 1, false);
            refused += instances.get(0).decide(List.of(check)).allowed() ? 0 : 1;
        }
        return refused;
    }

    @Test
    void aDeniedKeyMakesNoStoreCallUntilItsRetryTime() {
        RedisRateLimitStore exact = new RedisRateLimitStore(connections.get(0).connection(), new RedisKeys("rl"),
                false);
        DenialCache cache = new DenialCache(exact, 1_000);
        Rule slow = new Rule("slow", "slow", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("slow.", 2, 1, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        Check check = new Check(slow, new BucketKey(ClientIds.unkeyed().of("denied"), "slow"), 1, false);
        cache.evaluate(List.of(check)).block(Duration.ofSeconds(2));
        cache.evaluate(List.of(check)).block(Duration.ofSeconds(2));
        Verdict denied = cache.evaluate(List.of(check)).block(Duration.ofSeconds(2));
        assertThat(denied.allowed()).isFalse();
        long callsAfterDenial = ScriptCalls.of(redis);
        for (int i = 0; i < 200; i++) {
            Verdict again = cache.evaluate(List.of(check)).block(Duration.ofSeconds(2));
            assertThat(again.allowed()).isFalse();
            assertThat(again.outcomes().get(0).retryAfter()).isLessThanOrEqualTo(DenialCache.MAX_MEMORY);
        }
        assertThat(ScriptCalls.of(redis) - callsAfterDenial).as("200 refusals, no store call").isZero();
        sleep(Duration.ofMillis(1_100));
        assertThat(cache.evaluate(List.of(check)).block(Duration.ofSeconds(2)).allowed())
                .as("after the retry time the store is asked again, and a token has refilled").isTrue();
        assertThat(ScriptCalls.of(redis) - callsAfterDenial).isEqualTo(1);
    }

    /**
     * Drives {@code perSecond} decisions a second for {@code duration}, each sent to the instance {@code route}
     * picks; a null client spreads over 3,000 keys. Returns the number admitted.
     */
    private long drive(Duration duration, int perSecond, IntUnaryOperator route, String client) {
        AtomicLong admitted = new AtomicLong();
        int ticksPerMilli = Math.max(1, perSecond / 1000);
        long periodMicros = perSecond >= 1000 ? 1000 : 1_000_000 / perSecond;
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        AtomicLong tick = new AtomicLong();
        long end = System.nanoTime() + duration.toNanos();
        timer.scheduleAtFixedRate(() -> {
            for (int i = 0; i < ticksPerMilli && System.nanoTime() < end; i++) {
                long n = tick.getAndIncrement();
                String key = client != null ? client : "client-" + (n % 3_000);
                Check check = new Check(rule, new BucketKey(ClientIds.unkeyed().of(key), "api"), 1, false);
                Verdict verdict = instances.get(route.applyAsInt((int) n)).decide(List.of(check));
                if (verdict.allowed()) {
                    admitted.incrementAndGet();
                }
                if (verdict.source() == Verdict.Source.FALLBACK) {
                    fallbacks.incrementAndGet();
                }
            }
        }, 0, periodMicros, TimeUnit.MICROSECONDS);
        sleep(duration);
        timer.shutdownNow();
        try {
            timer.awaitTermination(5, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        decisionsSent += tick.get();
        return admitted.get();
    }

    private long decisionsSent;

    /** Decisions taken without the shares (settling stalled for three intervals: a starved machine). */
    private final AtomicLong fallbacks = new AtomicLong();

    private long total() {
        return decisionsSent;
    }


    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

}

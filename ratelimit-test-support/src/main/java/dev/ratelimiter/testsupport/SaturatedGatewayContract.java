package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Exact mode on a saturated gateway, whatever its flavour and its Redis: a closed loop of {@value #CONNECTIONS}
 * connections over {@value #KEYS} API keys keeps the gateway busy for {@value #RUN_SECONDS} s while one hot key asks
 * at ten times its limit, at the default 5 ms store timeout and breaker. A store-backed limiter admits the hot key what
 * its token bucket holds — the capacity C and the refill r over the time T the client spent sending, C + r·T — and
 * decides from Redis even when the gateway is too busy to read Redis's answers at once. When the store stops
 * answering in the middle, nobody waits on it and the hot key stays within the fallback's bound.
 *
 * <p>A subclass is a test class with a gateway of the flavour it tests, configured with {@link #limits()}, route
 * {@code /api/**} to a counting upstream, and its Redis; a clean Redis and upstream before each test. Each
 * run prints what it saw: the loop's answers per second (how much the saturated gateway served), the hot key against
 * C + r·T, the decisions made without the store by reason and second, and how long Redis waited for a CPU (on one
 * machine with the gateway, a late answer can be Redis's own).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
public abstract class SaturatedGatewayContract {

    /** The API key asking at ten times its limit. */
    public static final String HOT_KEY = "hot";
    /** The hot key's bucket: capacity C. */
    public static final int CAPACITY = 10;
    /** The hot key's bucket: refill r, tokens a second. */
    public static final int PER_SECOND = 10;
    /** Connections of the closed loop: requests in the gateway at all times. */
    public static final int CONNECTIONS = 32;
    /** API keys of the closed loop, {@code client-1} to {@code client-1000}. */
    public static final int KEYS = 1_000;

    static final int RUN_SECONDS = 20;
    static final Duration RUN = Duration.ofSeconds(RUN_SECONDS);
    /** One slice of the warm-up. */
    static final Duration WARM_UP = Duration.ofSeconds(2);
    static final int MAX_WARM_UP_SLICES = 15;
    /** The store's default timeout and queue allowance: the longest a decision may wait for it. */
    static final Duration MAX_WAIT = Duration.ofMillis(105);
    /** What a busy 2-core machine may add to any request: scheduling, a garbage collection. */
    static final Duration LOADED_MACHINE = Duration.ofSeconds(1);

    private RedisServer paused;

    /**
     * The limits of the gateway under test, as properties: store type redis at its default timeout and breaker; the
     * tier every loop key is in holds far more than the loop asks, the hot key has a rule of its own on top (both are
     * checked in one script).
     */
    public static Map<String, String> limits() {
        Map<String, String> limits = new LinkedHashMap<>();
        limits.put("ratelimit.store.type", "redis");
        limits.put("ratelimit.default-tier", "free");
        limits.put("ratelimit.tiers.free.limits.default.capacity", "1000000000");
        limits.put("ratelimit.tiers.free.limits.default.refill-tokens", "1000000000");
        limits.put("ratelimit.rules.hot-key.match.api-keys[0]", HOT_KEY);
        limits.put("ratelimit.rules.hot-key.capacity", String.valueOf(CAPACITY));
        limits.put("ratelimit.rules.hot-key.refill-tokens", String.valueOf(PER_SECOND));
        limits.put("ratelimit.rules.hot-key.refill-period", "1s");
        return limits;
    }

    /** The gateway's port on 127.0.0.1. */
    protected abstract int port();

    protected abstract LimiterProbe limiter();

    /** The upstream behind route {@code /api/**}, its counts reset before each test. */
    protected abstract StubUpstream upstream();

    /** The Redis server processes behind the gateway, for their CPU time. */
    protected abstract List<? extends RedisServer> redisServers();

    /** The Redis (the cluster primary) holding the hot key's bucket: the one paused. */
    protected abstract RedisServer hotKeyServer();

    /** How long the store stays paused in the middle of the run. */
    protected Duration pauseLength() {
        return Duration.ofSeconds(2);
    }

    @AfterEach
    void thaw() {
        if (paused != null && !paused.isRunning()) {
            paused.resume();
        }
    }

    @BeforeEach
    void storeBackedAndWarm() {
        awaitStoreBacked();
        // The JIT compiles the request path in the first seconds, and its compiler threads take the CPU a Redis on the
        // same machine needs (measured: a healthy Redis answering late through the first 9 s of an MVC gateway's run
        // after a fixed 3 s warm-up). A cold gateway is FreshInstancesTest's business: this one is loaded until the
        // compilers have finished with it (they ran for under a tenth of a slice), at least two slices, at most
        // MAX_WARM_UP_SLICES.
        CompilationMXBean compiler = ManagementFactory.getCompilationMXBean();
        boolean measurable = compiler != null && compiler.isCompilationTimeMonitoringSupported();
        long started = System.nanoTime();
        int slices = 0;
        long compiling = Long.MAX_VALUE;
        ClosedLoopLoad.Result last = null;
        while (slices < MAX_WARM_UP_SLICES && (slices < 2 || !measurable || compiling * 10 >= WARM_UP.toMillis())) {
            long before = measurable ? compiler.getTotalCompilationTime() : 0;
            last = ClosedLoopLoad.start(port(), "/api/warm-up", CONNECTIONS, KEYS, WARM_UP, 7 + slices).finish();
            compiling = measurable ? compiler.getTotalCompilationTime() - before : 0;
            slices++;
            if (!measurable && slices >= 2) {
                break;
            }
        }
        System.out.printf("Warm-up: %d slices in %.1f s, the compilers busy %d ms in the last; last slice: %s%n",
                slices, (System.nanoTime() - started) / 1e9, compiling, last);
        awaitStoreBacked();
    }

    @Test
    @Order(1)
    void underSaturationTheHotKeyGetsItsLimitAndRedisDecidesNearlyEverything() {
        Run run = Run.start(this, 1);
        Run.Outcome outcome = run.finish(this);
        outcome.print("healthy", limiter());

        outcome.assertNoErrors();
        // The loop keeps CONNECTIONS requests in the gateway at all times; saturated, the gateway has used all the CPU
        // it could get (its event loops, and Lettuce's, wait for a core: what made timers late before).
        assertTrue(Double.isNaN(outcome.machineCpu()) || outcome.machineCpu() >= 0.9,
                () -> "the loop did not saturate the machine: CPU " + outcome.machineCpu());
        double expected = outcome.expectedAdmitted();
        long admitted = outcome.hot().count(200);
        // 5 %, and the request in flight at each end of the span (decided in Redis a little before or after it)
        assertTrue(admitted >= Math.floor(0.95 * expected) - 2 && admitted <= Math.ceil(1.05 * expected) + 2,
                () -> "hot key admitted " + admitted + ", expected within 5 % of C + r·T = " + expected);
        assertEquals(admitted, upstream().hitsForApiKey(HOT_KEY), "the upstream saw exactly the admitted hot requests");
        // A Redis on the same machine as the gateway can itself answer late when the machine has more work than cores:
        // the message says how long Redis waited for a CPU, and in which seconds the decisions fell back.
        assertTrue(outcome.limiter().share() < 0.001, () -> "decided without a healthy Redis: " + outcome.limiter()
                + "; by second " + outcome.timeline() + "; " + outcome.redisCpu());
    }

    @Test
    @Order(2)
    void withTheStorePausedMidRunTheHotKeyStaysWithinTheFallbackBoundAndNobodyWaits() {
        Run run = Run.start(this, 2);
        LockSupport.parkNanos(RUN.minus(pauseLength()).dividedBy(2).toNanos());
        long pausedAt = System.nanoTime();
        paused = hotKeyServer();
        paused.pause();
        try {
            LockSupport.parkNanos(pauseLength().toNanos());
        }
        finally {
            paused.resume();
        }
        double pausedFor = (System.nanoTime() - pausedAt) / 1e9;
        Run.Outcome outcome = run.finish(this);
        outcome.print(String.format("store paused %.2f s", pausedFor), limiter());

        outcome.assertNoErrors();
        double expected = outcome.expectedAdmitted();
        long admitted = outcome.hot().count(200);
        // One instance: the fallback continues from Redis's last answer and is charged back to it, so the bound is
        // the bucket's plus what was in flight when Redis stopped answering.
        assertTrue(admitted <= 1.05 * expected + 5, () -> "hot key admitted " + admitted
                + " with the store paused, beyond 1.05 x (C + r·T) + 5 = " + (1.05 * expected + 5));
        assertEquals(admitted, upstream().hitsForApiKey(HOT_KEY), "the upstream saw exactly the admitted hot requests");
        double slowest = Math.max(outcome.load().maxMillis(), outcome.hot().maxLatencyMillis());
        assertTrue(slowest < MAX_WAIT.plus(LOADED_MACHINE).toMillis(), () -> "a request waited " + slowest
                + " ms: longer than the store's longest wait and a loaded machine's margin");
        LimiterProbe.Snapshot during = outcome.limiter();
        assertTrue(during.fallbacks() > 0, "the pause was noticed");
        assertEquals(0, during.rules("max-wait"), () -> "the silent store was noticed by its timeout, not by the "
                + "backstop: " + during + "; by second " + outcome.timeline());
        assertTrue(during.rules("timeout") + during.rules("breaker-open") > 0, () -> "reasons: " + during);

        awaitStoreBacked();
        LimiterProbe.Snapshot beforeAfter = limiter().snapshot();
        PacedClient.Result after = PacedClient.to(port()).path("/api/after").apiKey("after").perSecond(100)
                .connections(1).start(Duration.ofSeconds(2)).finish();
        LimiterProbe.Snapshot afterwards = limiter().snapshot().since(beforeAfter);
        System.out.println("After the pause: " + after + "; " + afterwards);
        assertEquals(after.answers().size(), after.count(200), () -> "after the store is back: " + after);
        // A fallback left on would decide all of them; a few lone timeouts are the loaded machine's (its Redis waits
        // for a CPU too, see the healthy run), a breaker that opened again would be the product's.
        assertTrue(afterwards.share() < 0.05 && afterwards.rules("breaker-open") == 0,
                () -> "decisions are store-backed again: " + afterwards);
    }

    /**
     * Until the breaker is closed (at most 15 s): it opens after a pause and lets trial calls through a second later;
     * requests go meanwhile, the breaker moves only on calls.
     */
    private void awaitStoreBacked() {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        try (KeepAliveConnection connection = new KeepAliveConnection(port(), 10_000)) {
            byte[] request = KeepAliveConnection.get("/api/probe", "probe");
            while (!"CLOSED".equals(limiter().breakerState()) && System.nanoTime() < deadline) {
                try {
                    connection.exchange(request);
                }
                catch (IOException ex) {
                    // the next one reopens the connection
                }
                LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
            }
        }
        assertEquals("CLOSED", limiter().breakerState(), "the breaker closes once Redis answers");
    }

    /** The closed loop and the hot key, started together, and a count of fallback decisions each second. */
    private record Run(ClosedLoopLoad load, PacedClient hot, LimiterProbe.Snapshot limiterBefore,
            RedisCpuTime redisBefore, long cpuNanosAtStart, long startedAt, Thread sampler, StringBuffer timeline) {

        static Run start(SaturatedGatewayContract test, long seed) {
            LimiterProbe limiter = test.limiter();
            LimiterProbe.Snapshot before = limiter.snapshot();
            RedisCpuTime redis = RedisCpuTime.of(test.redisServers());
            machineCpuSinceLastAsked();
            long cpu = processCpuNanos();
            long started = System.nanoTime();
            ClosedLoopLoad load = ClosedLoopLoad.start(test.port(), "/api/load", CONNECTIONS, KEYS, RUN, seed);
            PacedClient hot = PacedClient.to(test.port()).path("/api/hot").apiKey(HOT_KEY)
                    .perSecond(10.0 * PER_SECOND).start(RUN);
            StringBuffer timeline = new StringBuffer();
            Thread sampler = new Thread(() -> {
                long last = limiter.fallbackDecisions();
                for (int second = 0; second < RUN_SECONDS; second++) {
                    LockSupport.parkNanos(1_000_000_000L);
                    long now = limiter.fallbackDecisions();
                    timeline.append(second == 0 ? "" : " ").append(now - last);
                    last = now;
                }
            }, "fallbacks-by-second");
            sampler.setDaemon(true);
            sampler.start();
            return new Run(load, hot, before, redis, cpu, started, sampler, timeline);
        }

        Outcome finish(SaturatedGatewayContract test) {
            PacedClient.Result hotAnswers = hot.finish();
            ClosedLoopLoad.Result loadAnswers = load.finish();
            double machine = machineCpuSinceLastAsked();
            double cores = (processCpuNanos() - cpuNanosAtStart) / (double) (System.nanoTime() - startedAt);
            try {
                sampler.join(2_000);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            return new Outcome(loadAnswers, hotAnswers, test.limiter().snapshot().since(limiterBefore),
                    "[" + timeline + "]", RedisCpuTime.of(test.redisServers()).since(redisBefore), cores, machine);
        }

        private static long processCpuNanos() {
            return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                    ? os.getProcessCpuTime() : 0;
        }

        /**
         * The machine's CPU use (0 to 1; its container's when in one) since this was last asked, NaN where the JVM
         * cannot tell.
         */
        private static double machineCpuSinceLastAsked() {
            double load = ManagementFactory.getOperatingSystemMXBean()
                    instanceof com.sun.management.OperatingSystemMXBean os ? os.getCpuLoad() : -1;
            return load < 0 ? Double.NaN : load;
        }

        /**
         * @param limiter the limiter's decisions over the run
         * @param timeline its fallback decisions in each second of the run
         * @param cores cores the test JVM (gateway, upstream, clients) used on average
         * @param machineCpu the machine's CPU use over the run, 0 to 1
         */
        record Outcome(ClosedLoopLoad.Result load, PacedClient.Result hot, LimiterProbe.Snapshot limiter,
                String timeline, RedisCpuTime redisCpu, double cores, double machineCpu) {

            /** C + r·T, T the time the hot client spent sending. */
            double expectedAdmitted() {
                return CAPACITY + PER_SECOND * hot.sendingSpan().toNanos() / 1e9;
            }

            void print(String what, LimiterProbe now) {
                System.out.printf("Saturated gateway (%s): loop %s%n  hot key %s: admitted %d, C + r·T = %.1f "
                        + "(%+.1f %%)%n  limiter: %s; by second %s; last minute %s; breaker %s%n  CPU: machine "
                        + "%.0f %%, test JVM %.2f of %d cores; %s%n", what, load, hot, hot.count(200),
                        expectedAdmitted(), (hot.count(200) / expectedAdmitted() - 1) * 100, limiter, timeline,
                        now.lastMinute(), now.breakerState(), machineCpu * 100, cores,
                        Runtime.getRuntime().availableProcessors(), redisCpu);
            }

            void assertNoErrors() {
                assertEquals(load.answers(), load.count(200), () -> "every loop request admitted: " + load);
                assertEquals(hot.answers().size(), hot.count(200) + hot.count(429), () -> "hot key: " + hot);
            }
        }
    }
}

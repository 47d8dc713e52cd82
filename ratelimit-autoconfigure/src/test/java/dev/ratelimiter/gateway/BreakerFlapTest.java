package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimiter.testsupport.ClosedLoopLoad;
import dev.ratelimiter.testsupport.LimiterProbe;
import dev.ratelimiter.testsupport.PacedClient;
import dev.ratelimiter.testsupport.RedisCpuTime;
import dev.ratelimiter.testsupport.SaturatedGatewayContract;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static dev.ratelimiter.testsupport.SaturatedGatewayContract.CAPACITY;
import static dev.ratelimiter.testsupport.SaturatedGatewayContract.CONNECTIONS;
import static dev.ratelimiter.testsupport.SaturatedGatewayContract.HOT_KEY;
import static dev.ratelimiter.testsupport.SaturatedGatewayContract.KEYS;
import static dev.ratelimiter.testsupport.SaturatedGatewayContract.PER_SECOND;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis that keeps stopping and starting again under a saturating load: paused and resumed 100 times, each state
 * lasting a random 20 to 500 ms, so that the breaker opens, retries and closes over and over, and the hot key's
 * decisions pass from Redis to the fallback and back a hundred times. The fallback continues from what Redis last
 * said and what it admits is charged back, so the hot key stays within its bucket however often that happens — and
 * the charges do not starve it either. The seed is printed; {@code -Dratelimit.test.flap-seed=<seed>} replays one.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class BreakerFlapTest {

    private static final int FLAPS = 100;

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEach();

    @LocalServerPort
    int port;

    @Autowired
    ApplicationContext context;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        fixture.route(registry, 0, "api", "/api/**");
        SaturatedGatewayContract.limits().forEach((name, value) -> registry.add(name, () -> value));
    }

    @AfterEach
    void thaw() {
        if (!fixture.redis().server().isRunning()) {
            fixture.redis().server().resume();
        }
    }

    @Test
    void aRedisPausedAndResumedAHundredTimesKeepsTheHotKeyWithinItsBucketAndNeitherStarvesIt() {
        long seed = Long.getLong("ratelimit.test.flap-seed", new Random().nextLong());
        Random random = new Random(seed);
        long[] pauses = new long[FLAPS];
        long[] gaps = new long[FLAPS];
        long total = 0;
        for (int i = 0; i < FLAPS; i++) {
            pauses[i] = 20 + random.nextInt(481);
            gaps[i] = 20 + random.nextInt(481);
            total += pauses[i] + gaps[i];
        }
        // A second of store-backed decisions before the first pause; signals take a few ms each, hence the margin.
        Duration run = Duration.ofMillis(1_000 + total).plusSeconds(3);
        System.out.printf("Breaker flap: seed %d (-Dratelimit.test.flap-seed=%d), %d pauses of 20-500 ms, %.1f s "
                + "paused of %.1f s drawn%n", seed, seed, FLAPS, sum(pauses) / 1e3, total / 1e3);
        // The JIT compiles the request path in the first seconds: a cold gateway is FreshInstancesTest's business.
        ClosedLoopLoad.start(port, "/api/warm-up", CONNECTIONS, KEYS, Duration.ofSeconds(3), seed).finish();
        LimiterProbe limiter = StoreStackProbe.of(context);
        LimiterProbe.Snapshot before = limiter.snapshot();
        RedisCpuTime redisBefore = RedisCpuTime.of(List.of(fixture.redis().server()));

        ClosedLoopLoad load = ClosedLoopLoad.start(port, "/api/load", CONNECTIONS, KEYS, run, seed);
        PacedClient hot = PacedClient.to(port).path("/api/hot").apiKey(HOT_KEY).perSecond(10.0 * PER_SECOND)
                .start(run);
        long flapStart = System.nanoTime();
        LockSupport.parkNanos(Duration.ofSeconds(1).toNanos());
        for (int i = 0; i < FLAPS; i++) {
            fixture.redis().server().pause();
            try {
                LockSupport.parkNanos(Duration.ofMillis(pauses[i]).toNanos());
            }
            finally {
                fixture.redis().server().resume();
            }
            LockSupport.parkNanos(Duration.ofMillis(gaps[i]).toNanos());
        }
        double flapSeconds = (System.nanoTime() - flapStart) / 1e9;
        PacedClient.Result hotAnswers = hot.finish();
        ClosedLoopLoad.Result loadAnswers = load.finish();
        LimiterProbe.Snapshot during = limiter.snapshot().since(before);
        RedisCpuTime redisCpu = RedisCpuTime.of(List.of(fixture.redis().server())).since(redisBefore);

        double expected = CAPACITY + PER_SECOND * hotAnswers.sendingSpan().toNanos() / 1e9;
        long admitted = hotAnswers.count(200);
        System.out.printf("Breaker flap: %d pauses over %.1f s; loop %s%n  hot key %s: admitted %d, C + r·T = %.1f "
                + "(%.3f of it; bounds %.1f to %.1f)%n  limiter: %s; last minute %s; breaker %s%n  %s%n", FLAPS,
                flapSeconds, loadAnswers, hotAnswers, admitted, expected, admitted / expected, 0.8 * expected,
                1.05 * expected + 5, during, limiter.lastMinute(), limiter.breakerState(), redisCpu);

        assertThat(loadAnswers.byStatus()).as("every loop request admitted, none failed").containsOnlyKeys(200);
        assertThat(hotAnswers.byStatus()).as("the hot key: admitted or refused, nothing else").containsOnlyKeys(200,
                429);
        // One instance: the fallback bucket continues from Redis's state and its admissions are charged back, so the
        // bucket's bound holds, plus the requests in flight each time Redis stopped answering.
        assertThat(admitted).as("hot key admitted, C + r·T = %.1f", expected)
                .isLessThanOrEqualTo((long) Math.floor(1.05 * expected + 5))
                .isGreaterThanOrEqualTo((long) Math.ceil(0.8 * expected));
        assertThat(fixture.upstream().hitsForApiKey(HOT_KEY)).as("the upstream saw exactly the admitted hot requests")
                .isEqualTo(admitted);
        assertThat(during.fallbacks()).as("Redis's pauses were noticed").isPositive();
    }

    private static long sum(long[] values) {
        long sum = 0;
        for (long value : values) {
            sum += value;
        }
        return sum;
    }
}

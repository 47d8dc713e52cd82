package dev.ratelimiter.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.benchmarks.sidebyside.CommandStats;
import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisRateLimitStore;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;

/**
 * What one exact decision costs, without a gateway around it: the product's own {@link RedisRateLimitStore} driven
 * against a real Redis at saturation (a fixed number of decisions in flight, each answered one starting the next), one
 * token-bucket check per decision on 1,000 random clients — the shape of the side-by-side benchmark's exact case.
 *
 * <p>Prints, per round: decisions per second, decisions per script call (how well they were batched), Redis time per
 * decision (the scripts' own time from {@code INFO commandstats}, and Redis's process CPU from {@code INFO cpu}) and
 * this JVM's process CPU per decision (the limiter's client side plus this small load loop).
 *
 * <p>{@code java -cp benchmarks.jar dev.ratelimiter.benchmarks.ExactStoreCost [--in-flight=64] [--seconds=10]
 * [--rounds=3] [--warmup=5] [--calls-in-flight=2]} ({@code calls-in-flight}: the store's
 * {@code ratelimit.store.calls-in-flight}, 0 for no limit)
 */
public final class ExactStoreCost {

    private static final int CLIENTS = 1_000;

    private ExactStoreCost() {
    }

    public static void main(String[] args) throws Exception {
        int inFlight = option(args, "in-flight", 64);
        int seconds = option(args, "seconds", 10);
        int rounds = option(args, "rounds", 3);
        int warmup = option(args, "warmup", 5);
        int callsInFlight = option(args, "calls-in-flight", 2);
        try (RedisServer redis = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
            LimiterConnection connection = new LimiterConnection(() -> client, redis.description(),
                    Duration.ofSeconds(2), Duration.ofMillis(100));
            connection.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!connection.connected() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            // The gateway's timeout is 5 ms; on a shared machine a generous one keeps fallbacks out of the figures.
            RedisRateLimitStore store = new RedisRateLimitStore(connection, new RedisKeys("rl"), false,
                    Duration.ofSeconds(2), Duration.ofSeconds(3), callsInFlight);
            List<List<Check>> checks = checks();
            run(store, checks, inFlight, Duration.ofSeconds(warmup));
            System.out.printf("in flight %d, calls in flight %d, %d s a round%n", inFlight, callsInFlight, seconds);
            for (int round = 1; round <= rounds; round++) {
                CommandStats before = CommandStats.of(redis);
                long cpuBefore = processCpuNanos();
                long decisions = run(store, checks, inFlight, Duration.ofSeconds(seconds));
                long cpu = processCpuNanos() - cpuBefore;
                CommandStats used = CommandStats.of(redis).minus(before);
                System.out.printf("round %d: %,.0f decisions/s, %.1f decisions a call, Redis script %.2f us and "
                        + "Redis CPU %.2f us a decision (%.1f us a call), this JVM %.2f us CPU a decision%n", round,
                        decisions / (double) seconds, decisions / (double) used.scriptCalls(),
                        used.scriptMicros() / (double) decisions, used.cpuMicros() / (double) decisions,
                        used.scriptMicros() / (double) used.scriptCalls(), cpu / 1e3 / decisions);
            }
            connection.close();
            client.shutdown();
        }
    }

    private static List<List<Check>> checks() {
        TokenBucketLimit roomy = TokenBucketLimit.of("b.", 1_000_000_000L, 1_000_000_000L, Duration.ofSeconds(1));
        Rule rule = new Rule("exact", "exact", Match.ANY, List.of(Dimension.API_KEY), roomy, 0,
                dev.ratelimiter.core.Mode.ENFORCE, FailureMode.LOCAL);
        List<List<Check>> checks = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            checks.add(List.of(new Check(rule, new BucketKey(ClientIds.unkeyed().of("client-" + i), "exact"), 1,
                    false)));
        }
        return checks;
    }

    /** Keeps {@code inFlight} decisions going for {@code length}; returns how many were answered. */
    private static long run(RedisRateLimitStore store, List<List<Check>> checks, int inFlight, Duration length)
            throws InterruptedException {
        long end = System.nanoTime() + length.toNanos();
        AtomicLong answered = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        CountDownLatch done = new CountDownLatch(inFlight);
        for (int i = 0; i < inFlight; i++) {
            new Loop(store, checks, end, answered, failed, done, new SplittableRandom(i)).next();
        }
        if (!done.await(length.toSeconds() + 30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("decisions still in flight 30 s after the end");
        }
        if (failed.get() > 0) {
            System.out.printf("  (%d decisions failed, each ending its loop)%n", failed.get());
        }
        return answered.get();
    }

    /** One decision in flight at a time: each answer starts the next, until the end. */
    private record Loop(RedisRateLimitStore store, List<List<Check>> checks, long end, AtomicLong answered,
            AtomicLong failed, CountDownLatch done, SplittableRandom random) {

        void next() {
            if (System.nanoTime() - end > 0) {
                done.countDown();
                return;
            }
            store.evaluate(checks.get(random.nextInt(CLIENTS))).toFuture().whenComplete((verdict, failure) -> {
                if (failure == null) {
                    answered.incrementAndGet();
                    next();
                }
                else {
                    // A failure can be answered at once (no connection): going on would recurse without end.
                    failed.incrementAndGet();
                    done.countDown();
                }
            });
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static int option(String[] args, String name, int fallback) {
        return Arrays.stream(args).filter(arg -> arg.startsWith("--" + name + "="))
                .map(arg -> Integer.parseInt(arg.substring(name.length() + 3))).findFirst().orElse(fallback);
    }
}

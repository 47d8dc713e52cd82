package dev.ratelimiter.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.ratelimiter.benchmarks.sidebyside.CommandStats;
import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.SettleClient.Report;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisSettleClient;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;

/**
 * What local mode's settles cost Redis: {@code instances} gateways each settling {@code keys} active buckets through
 * the product's own {@link RedisSettleClient}, {@code rounds} times, measured by Redis itself ({@link CommandStats}:
 * its CPU, script time and commands) — with nothing else running. From
 * those: Redis CPU per settle, per bucket, and how many bucket-settles per second one Redis shard (one core) carries.
 *
 * <pre>
 * java -cp ratelimit-benchmarks/target/benchmarks.jar dev.ratelimiter.benchmarks.SettleCost [keys=10000]
 *     [instances=3] [rounds=20]
 * </pre>
 */
public final class SettleCost {

    /** What one measurement found. */
    record Result(int keys, int instances, int settles, double redisCpuMillisPerSettle, double scriptMillisPerSettle,
            double commandsPerSettle, long scriptCalls, double millisPerCall) {

        double microsPerBucket() {
            return redisCpuMillisPerSettle * 1000 / keys;
        }

        /** Bucket-settles per second one single-threaded Redis carries at 100 % of its core. */
        double bucketsPerSecondPerShard() {
            return 1_000_000 / microsPerBucket();
        }
    }

    private SettleCost() {
    }

    public static void main(String[] args) {
        int keys = 10_000;
        int instances = 3;
        int rounds = 20;
        for (String arg : args) {
            String[] pair = arg.replaceFirst("^--", "").split("=", 2);
            switch (pair[0]) {
                case "keys" -> keys = Integer.parseInt(pair[1]);
                case "instances" -> instances = Integer.parseInt(pair[1]);
                case "rounds" -> rounds = Integer.parseInt(pair[1]);
                default -> throw new IllegalArgumentException("unknown option " + arg);
            }
        }
        try (RedisServer redis = RedisServers.start()) {
            Result result = measure(redis, keys, instances, rounds);
            System.out.println(describe(result));
        }
    }

    static String describe(Result r) {
        return String.format(Locale.ROOT, "%d active keys, %d instances, %d settles (%d script calls): Redis CPU "
                + "%.2f ms per settle (%.2f µs per bucket; script time %.2f ms, %.0f commands per settle, %.2f ms "
                + "per script call); one shard at 100 %% of its core: %.0f bucket-settles/s = %.1f settles/s of %d keys",
                r.keys, r.instances, r.settles, r.scriptCalls, r.redisCpuMillisPerSettle, r.microsPerBucket(),
                r.scriptMillisPerSettle, r.commandsPerSettle, r.millisPerCall, r.bucketsPerSecondPerShard(),
                r.bucketsPerSecondPerShard() / r.keys, r.keys);
    }

    static Result measure(RedisServer redis, int keys, int instances, int rounds) {
        RedisClient client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
        List<LimiterConnection> connections = new ArrayList<>();
        try {
            List<RedisSettleClient> settlers = new ArrayList<>();
            for (int i = 0; i < instances; i++) {
                LimiterConnection connection = new LimiterConnection(() -> client, redis.description(),
                        Duration.ofSeconds(10), Duration.ofMillis(100));
                connection.start();
                connections.add(connection);
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (!connection.connected() && System.nanoTime() < deadline) {
                    java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
                }
                // A minute before an instance counts as gone: with 10k keys one round of settles takes seconds here,
                // and instances found stale would be removed from every bucket (extra commands, not the steady state).
                settlers.add(new RedisSettleClient(connection, new RedisKeys("rl"), Duration.ofMinutes(1), false));
            }
            // A bucket per client as the sample's tiers have it; each instance saw some demand for every key.
            TokenBucketLimit limit = TokenBucketLimit.of("t.", 100, 100, Duration.ofSeconds(1));
            List<Report> reports = new ArrayList<>(keys);
            for (int k = 0; k < keys; k++) {
                reports.add(new Report(new BucketKey("t", "client-" + k), limit, 5, 3, 0, 0, 1));
            }
            // One round unmeasured: the first settle of a bucket creates it, later ones are the steady state.
            settlers.forEach(settler -> settler.settle(reports).block(Duration.ofMinutes(1)));
            CommandStats before = CommandStats.of(redis);
            for (int round = 0; round < rounds; round++) {
                for (RedisSettleClient settler : settlers) {
                    settler.settle(reports).block(Duration.ofMinutes(1));
                }
            }
            CommandStats done = CommandStats.of(redis).minus(before);
            int settles = rounds * instances;
            long calls = done.scriptCalls();
            return new Result(keys, instances, settles, done.cpuMicros() / 1000.0 / settles,
                    done.scriptMicros() / 1000.0 / settles, (double) done.commands() / settles, calls,
                    calls == 0 ? 0 : done.scriptMicros() / 1000.0 / calls);
        }
        finally {
            connections.forEach(LimiterConnection::close);
            client.shutdown();
        }
    }
}

package dev.ratelimiter.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LeaseStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.SettleLoop;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.redis.RedisKeys;
import dev.ratelimiter.redis.RedisRateLimitStore;
import dev.ratelimiter.redis.RedisSettleClient;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;

/**
 * One decision in process: local mode (this instance's share, settled every 100 ms in the background) against exact
 * mode (one script call to a real Redis on this machine), over 1,000 clients under their limits. Run with
 * {@code -prof gc} for the allocation per decision.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class DecisionBenchmark {

    private static final int CLIENTS = 1_000;

    private RedisServer redis;
    private RedisClient client;
    private LimiterConnection connection;
    private LeaseStore local;
    private SettleLoop settle;
    private RedisRateLimitStore exact;
    private List<List<Check>> localChecks;
    private List<List<Check>> exactChecks;
    private int next;

    @Setup(Level.Trial)
    public void start() {
        redis = RedisServers.start();
        client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
        connection = new LimiterConnection(() -> client, redis.description(), Duration.ofSeconds(2),
                Duration.ofMillis(100));
        connection.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!connection.connected() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        RedisKeys keys = new RedisKeys("rl");
        exact = new RedisRateLimitStore(connection, keys, false);
        // The stack a gateway runs with (default settle interval, one instance); exact mode is measured on the bare
        // Redis store under it, local mode on the stack's leases.
        StoreStack stack = StoreStack.builder()
                .sharedStore(exact)
                .settleClient(RedisSettleClient.settlingEvery(StoreStack.DEFAULT_SETTLE_INTERVAL, connection, keys,
                        false))
                .build();
        local = stack.leases();
        settle = stack.settleLoop();
        settle.start();
        // Limits far above what a benchmark iteration spends: the path measured is the allowed one.
        TokenBucketLimit roomy = TokenBucketLimit.of("b.", 1_000_000_000L, 1_000_000_000L, Duration.ofSeconds(1));
        Rule localRule = new Rule("local", "local", Match.ANY, List.of(Dimension.API_KEY), roomy, 0,
                dev.ratelimiter.core.Mode.ENFORCE, FailureMode.LOCAL, StoreMode.LOCAL, 1);
        Rule exactRule = new Rule("exact", "exact", Match.ANY, List.of(Dimension.API_KEY), roomy, 0,
                dev.ratelimiter.core.Mode.ENFORCE, FailureMode.LOCAL);
        localChecks = new ArrayList<>();
        exactChecks = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            String client = ClientIds.unkeyed().of("client-" + i);
            localChecks.add(List.of(new Check(localRule, new BucketKey(client, "local"), 1, false)));
            exactChecks.add(List.of(new Check(exactRule, new BucketKey(client, "exact"), 1, false)));
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        settle.stop();
        connection.close();
        client.shutdown();
        redis.close();
    }

    @Benchmark
    public Verdict local() {
        next = (next + 1) % CLIENTS;
        return local.decide(localChecks.get(next));
    }

    @Benchmark
    public Verdict exact() {
        next = (next + 1) % CLIENTS;
        return exact.evaluate(exactChecks.get(next)).block(Duration.ofSeconds(1));
    }
}

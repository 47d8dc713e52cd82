package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.BucketReading;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.StoreNotConnectedException;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.UsageProbe;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;
import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import io.lettuce.core.ScriptOutputType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import static dev.ratelimiter.testsupport.property.Gen.weighted;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * peek.lua against rate_limit.lua on a real Redis: what a peek says is left is what the next decision finds before it
 * spends (within the refill of the time between the two, which both scripts report), and a peek writes nothing: no
 * key made, no TTL moved, no field changed.
 */
class PeekScriptTest {

    private static RedisServer redis;
    private static TestConnection connection;

    @BeforeAll
    static void start() {
        redis = RedisServers.start();
        connection = TestConnection.open(redis.host(), redis.port());
    }

    @AfterAll
    static void stop() {
        connection.close();
        redis.close();
    }

    @BeforeEach
    void empty() {
        redis.command("FLUSHALL");
    }

    record Call(long stepMicros, int cost) {
    }

    record Sequence(Limit limit, List<Call> calls) {
    }

    private static Gen<Sequence> tokenBuckets() {
        return Gen.zip(Gen.longs(1, 500), Gen.longs(1, 500), Gen.longs(1, 60_000), List::of).flatMap(drawn -> {
            TokenBucketLimit limit = new TokenBucketLimit(drawn.get(0), drawn.get(1), Duration.ofMillis(drawn.get(2)));
            long fillMicros = Math.max(2, limit.window().toNanos() / 1_000);
            Gen<Long> steps = Gen.frequency(weighted(3, Gen.just(0L)), weighted(10, Gen.longs(1, fillMicros / 10 + 2)),
                    weighted(2, Gen.longs(1, fillMicros * 2)));
            return calls(steps, limit.quota()).map(calls -> new Sequence(limit, calls));
        });
    }

    private static Gen<Sequence> slidingWindows() {
        return Gen.zip(Gen.longs(1, 500), Gen.longs(50, 120_000), List::of).flatMap(drawn -> {
            SlidingWindowLimit limit = new SlidingWindowLimit(drawn.get(0), Duration.ofMillis(drawn.get(1)));
            long windowMicros = drawn.get(1) * 1_000;
            Gen<Long> steps = Gen.frequency(weighted(3, Gen.just(0L)), weighted(10, Gen.longs(1, windowMicros / 5)),
                    weighted(3, Gen.longs(1, windowMicros * 3)));
            return calls(steps, limit.quota()).map(calls -> new Sequence(limit, calls));
        });
    }

    private static Gen<List<Call>> calls(Gen<Long> steps, long quota) {
        Gen<Integer> costs = Gen.frequency(weighted(6, Gen.just(1)), weighted(3, Gen.ints(1, (int) quota)),
                weighted(1, Gen.ints(1, (int) quota + 3)));
        return Gen.zip(steps, costs, Call::new).list(1, 30);
    }

    @TestFactory
    Stream<DynamicTest> aTokenBucketPeekIsWhatTheNextDecisionFinds() {
        return Property.forAll(tokenBuckets()).tries(60).check(PeekScriptTest::peekMatchesNextDecision);
    }

    @TestFactory
    Stream<DynamicTest> aSlidingWindowPeekIsWhatTheNextDecisionFinds() {
        return Property.forAll(slidingWindows()).tries(60).check(PeekScriptTest::peekMatchesNextDecision);
    }

    /**
     * Before each decision, a peek at the same target time: the decision, run just after, finds at least what the peek
     * said (tokens only grow, a window's estimate only falls, while nothing is spent), and at most that plus what the
     * time between them (both scripts report their clock) can add; what the peek says is enough is allowed.
     */
    private static void peekMatchesNextDecision(Sequence sequence) throws Exception {
        redis.command("DEL", "rl:peek");
        String[] check = arguments(sequence.limit());
        double perMicro = sequence.limit().quota() / (double) (sequence.limit().window().toNanos() / 1_000);
        long target = serverMicros() + 1_000_000_000L;
        long latest = target;
        for (Call call : sequence.calls()) {
            target = Math.max(target, latest) + call.stepMicros();
            String where = sequence + " at " + target + " cost " + call.cost();
            List<Long> peek = script(LimiterScript.PEEK, "rl:peek", target, List.of(check[0], check[1], check[2], "0"));
            long peeked = peek.get(1);
            long peekedAt = peek.get(4);
            // placed at the peek's own time: each call lands a little after the time it is placed at
            List<Long> decided = script(LimiterScript.RATE_LIMIT, "rl:peek", peekedAt,
                    List.of("1000", "", "0", "1", "1", check[0], check[1], check[2], Integer.toString(call.cost()), "0"));
            boolean allowed = decided.get(0) == 1L;
            long decidedAt = decided.get(5);
            latest = decidedAt;
            long before = decided.get(2) + (allowed ? call.cost() : 0);
            assertThat(decidedAt).as(where).isGreaterThanOrEqualTo(peekedAt);
            assertThat(before).as("the decision finds at least what the peek said: " + where).isGreaterThanOrEqualTo(
                    Math.min(peeked, sequence.limit().quota()));
            long refill = (long) Math.ceil((decidedAt - peekedAt) * perMicro);
            assertThat(before).as("and at most that and the refill between: " + where)
                    .isLessThanOrEqualTo(Math.min(sequence.limit().quota(), peeked + 1 + refill));
            if (peeked >= call.cost()) {
                assertThat(allowed).as("what the peek says fits is allowed: " + where).isTrue();
            }
        }
    }

    /** rate_limit.lua's arguments before its shift argument are filled here, the shift placing it at the target. */
    private static List<Long> script(LimiterScript script, String key, long targetMicros, List<String> arguments)
            throws Exception {
        List<String> args = new ArrayList<>(arguments);
        long shift = targetMicros - serverMicros();
        if (script == LimiterScript.PEEK) {
            args.add(0, Long.toString(shift));
        }
        else {
            args.set(1, Long.toString(shift));
        }
        return connection.connection().<List<Long>>script(script, ScriptOutputType.MULTI, new String[] { key },
                args.toArray(String[]::new)).get(5, TimeUnit.SECONDS);
    }

    private static String[] arguments(Limit limit) {
        return limit.match(RedisRateLimitStore.SCRIPT_ARGUMENTS);
    }

    @Test
    void readingAThousandTimesChangesNothingAndMakesNoKey() throws Exception {
        TokenBucketLimit bucket = new TokenBucketLimit(10, 1, Duration.ofSeconds(1));
        SlidingWindowLimit window = new SlidingWindowLimit(10, Duration.ofMinutes(1));
        ConcurrencyLimit concurrency = new ConcurrencyLimit(3, Duration.ofSeconds(30));
        RedisKeys keys = new RedisKeys("rl");
        RedisRateLimitStore store = new RedisRateLimitStore(connection.connection(), keys, false,
                Duration.ofSeconds(2));
        BucketKey spent = new BucketKey("AAAAAAAAAAAAAAAAAAAAAA", "r@t");
        BucketKey counted = new BucketKey("AAAAAAAAAAAAAAAAAAAAAA", "w@w60000");
        BucketKey held = new BucketKey("AAAAAAAAAAAAAAAAAAAAAA", "c@c");
        for (int i = 0; i < 4; i++) {
            store.evaluate(List.of(new dev.ratelimiter.core.Check(rule("r", bucket), spent, 1, false),
                    new dev.ratelimiter.core.Check(rule("w", window), counted, 1, false))).block(Duration.ofSeconds(5));
        }
        dev.ratelimiter.core.RequestPermits permits = new dev.ratelimiter.core.RequestPermits();
        store.evaluate(List.of(new dev.ratelimiter.core.Check(rule("c", concurrency), held, 1, false, permits)))
                .block(Duration.ofSeconds(5));
        BucketKey unseen = new BucketKey("BBBBBBBBBBBBBBBBBBBBBB", "r@t");
        List<UsageProbe> probes = List.of(new UsageProbe(rule("r", bucket), spent),
                new UsageProbe(rule("w", window), counted), new UsageProbe(rule("c", concurrency), held),
                new UsageProbe(rule("r", bucket), unseen));
        List<String> names = List.of(keys.bucket(spent), keys.bucket(counted), keys.bucket(held), keys.bucket(unseen));
        List<String> before = snapshot(names);
        String keysBefore = redis.command("DBSIZE");
        RedisUsageReader reader = new RedisUsageReader(connection.connection(), keys, false, Duration.ofSeconds(2));

        List<BucketReading> last = null;
        for (int i = 0; i < 1_000; i++) {
            last = reader.read(probes).block(Duration.ofSeconds(5));
        }

        assertThat(snapshot(names)).as("fields and absolute expiry of every key").isEqualTo(before);
        assertThat(redis.command("DBSIZE")).isEqualTo(keysBefore);
        assertThat(redis.command("EXISTS", keys.bucket(unseen)).trim()).endsWith("0");
        assertThat(last.get(0).stored()).isTrue();
        assertThat(last.get(0).remaining()).isBetween(6L, 10L);
        assertThat(last.get(1).remaining()).isEqualTo(6);
        assertThat(last.get(1).resetAfter()).isPositive().isLessThanOrEqualTo(Duration.ofMinutes(2));
        assertThat(last.get(2).inProgress()).isEqualTo(1);
        assertThat(last.get(2).remaining()).isEqualTo(2);
        assertThat(last.get(3)).isEqualTo(new BucketReading(false, 10, Duration.ZERO, 0));
    }

    @Test
    void aLocalModeBucketIsReadAsItsPoolAndTheSharesInstancesHold() {
        TokenBucketLimit hourly = new TokenBucketLimit(10, 10, Duration.ofHours(1));
        Rule local = new Rule("l", "l", Match.ANY, List.of(Dimension.API_KEY), hourly, 1, Mode.ENFORCE,
                FailureMode.OPEN, dev.ratelimiter.core.StoreMode.LOCAL, 1);
        RedisKeys keys = new RedisKeys("rl");
        BucketKey bucket = new BucketKey("CCCCCCCCCCCCCCCCCCCCCC", "l@t");
        String name = keys.settledBucket(bucket);
        redis.command("HSET", name, "t", "3", "ts", Long.toString(serverMicros()), "h:gw-1", "2", "h:gw-2", "1",
                "d:gw-1", "7", "at:gw-1", Long.toString(serverMicros()));
        redis.command("PEXPIRE", name, "600000");
        String before = redis.command("HGETALL", name) + redis.command("PEXPIRETIME", name);
        RedisUsageReader reader = new RedisUsageReader(connection.connection(), keys, false, Duration.ofSeconds(2));

        BucketReading reading = reader.read(List.of(new UsageProbe(local, bucket))).block(Duration.ofSeconds(5))
                .get(0);

        assertThat(reading.stored()).isTrue();
        assertThat(reading.remaining()).as("pool 3 and shares 2 + 1").isEqualTo(6);
        assertThat(reading.resetAfter()).isPositive();
        assertThat(redis.command("HGETALL", name) + redis.command("PEXPIRETIME", name)).isEqualTo(before);
        assertThat(redis.command("EXISTS", keys.bucket(bucket)).trim()).endsWith("0");
    }

    @Test
    void aReadWithoutAConnectionFailsAtOnce() {
        LimiterConnection closed = new LimiterConnection(() -> {
            throw new IllegalStateException("no Redis here");
        }, "nowhere", Duration.ofSeconds(1), Duration.ofSeconds(1));
        RedisUsageReader reader = new RedisUsageReader(closed, new RedisKeys("rl"), false, Duration.ofSeconds(1));
        assertThatThrownBy(() -> reader.read(List.of(new UsageProbe(rule("r", new TokenBucketLimit(1, 1,
                Duration.ofSeconds(1))), new BucketKey("AAAAAAAAAAAAAAAAAAAAAA", "r@t")))).block())
                .isInstanceOf(StoreNotConnectedException.class);
    }

    @Test
    void aScriptThatWritesIsRefusedByRedis() {
        // The guarantee is Redis's, not only the script's care: a script flagged no-writes cannot write at all.
        assertThat(LimiterScript.PEEK.body()).startsWith("#!lua flags=no-writes\n");
    }

    private static Rule rule(String id, Limit limit) {
        return new Rule(id, "default", Match.ANY, List.of(Dimension.API_KEY), limit, 1, Mode.ENFORCE,
                FailureMode.OPEN);
    }

    /** Each key's type, fields and absolute expiry (ms): what a write of any kind would change. */
    private static List<String> snapshot(List<String> names) {
        List<String> all = new ArrayList<>();
        for (String name : names) {
            String type = redis.command("TYPE", name).trim();
            String content = type.endsWith("hash") ? redis.command("HGETALL", name)
                    : type.endsWith("zset") ? redis.command("ZRANGE", name, "0", "-1", "WITHSCORES") : "";
            all.add(name + " " + type + " " + content + " " + redis.command("PEXPIRETIME", name).trim());
        }
        return all;
    }

    private static long serverMicros() {
        String[] parts = redis.command("TIME").trim().split("\\s+");
        return Long.parseLong(parts[0]) * 1_000_000 + Long.parseLong(parts[1]);
    }
}

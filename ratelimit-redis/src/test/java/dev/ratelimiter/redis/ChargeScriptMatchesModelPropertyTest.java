package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.FallbackCharges;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.testsupport.RedisServerExtension;
import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * charge.lua, run the way the fail-safe store runs it ({@link RedisFallbackCharges} over a {@link LimiterConnection}),
 * against a Java model of it: for prior states written into Redis by hand — edge cases first, then seeded random ones —
 * the state and TTL each key is left with equal the model's, computed from the prior state and the clock the script
 * read.
 *
 * <p>The script reads Redis's clock ({@code TIME}). A token bucket writes it ({@code ts} = the later of it and the
 * bucket's own time), and the model run at what was written, clamped to the clock readings around the call, gives the
 * same result whichever branch the script took. A window's index is known to lie between the windows of those two
 * readings; the state must be the model's at one of them.
 *
 * <p>Replay a failure with the seed and case index of its message: {@code -Dratelimit.charge.seed=…}; case {@code i}
 * of the random ones draws from {@code new Random(seed + i)}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ChargeScriptMatchesModelPropertyTest {

    private static final long SEED = Long.getLong("ratelimit.charge.seed", 20_261_205L);
    private static final int RANDOM_CASES = 400;
    private static final double SLACK_MILLIS = RedisRateLimitStore.TTL_SLACK_MILLIS;
    private static final double MAX_TTL_MILLIS = 800.0 * 24 * 3600 * 1000;

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final RedisKeys keys = new RedisKeys("rl");
    private static TestConnection connection;
    private static RedisClient client;
    private static StatefulRedisConnection<String, String> rawConnection;
    private static RedisCommands<String, String> raw;
    private static RedisFallbackCharges charges;

    @BeforeAll
    static void connect() {
        connection = TestConnection.open(redis.host(), redis.port());
        client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
        rawConnection = client.connect();
        raw = rawConnection.sync();
        charges = new RedisFallbackCharges(connection.connection(), keys, false);
    }

    @AfterAll
    static void close() {
        rawConnection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        connection.close();
    }

    @Test
    void edgeCasesLeaveWhatTheModelDoes() {
        List<Case> cases = edgeCases();
        for (int i = 0; i < cases.size(); i++) {
            check(cases.get(i), "edge case " + i + " (" + cases.get(i).label() + ")");
        }
    }

    @Test
    void randomCasesLeaveWhatTheModelDoes() {
        for (int i = 0; i < RANDOM_CASES; i++) {
            check(randomCase(new Random(SEED + i)), "random case " + i + " of seed " + SEED);
        }
    }

    @Test
    void aBucketChargedToMinusItsCapacityRefusesUntilTheDebtAndOneTokenHaveRefilled() {
        // 10 tokens, 1 a second: charged far beyond, it owes 10, and a request of 1 waits 11 s.
        TokenBucketLimit limit = TokenBucketLimit.of("debt.", 10, 1, Duration.ofSeconds(1));
        Check check = check(limit, "debt", "r");
        String key = keys.bucket(check.bucket());
        raw.del(key);
        charges.charge(List.of(new FallbackCharges.Charge(check, 1e6))).block(Duration.ofSeconds(10));
        assertThat(number(raw.hget(key, "t"))).isEqualTo(-10.0);
        long chargedAt = (long) (double) number(raw.hget(key, "ts"));

        // Timed generously: this test is about the script's answer, not about a busy machine's 5 ms.
        Verdict verdict = new RedisRateLimitStore(connection.connection(), keys, false, Duration.ofSeconds(2))
                .evaluate(List.of(check)).block(Duration.ofSeconds(10));
        long since = serverMicros() - chargedAt;
        RuleOutcome refused = verdict.outcomes().get(0);
        assertThat(verdict.allowed()).isFalse();
        assertThat(refused.remaining()).isZero();
        assertThat(refused.retryAfter()).as("the debt of 10 and the token asked for, less what refilled since")
                .isBetween(Duration.ofSeconds(11).minus(Duration.ofNanos(since * 1_000)).minusMillis(1),
                        Duration.ofSeconds(11).plusMillis(1));
        assertThat(raw.pttl(key)).as("the key outlives the debt's refill")
                .isGreaterThanOrEqualTo(20_000 - since / 1_000);

        // On the script's clock moved ahead: the bucket is back to 1 token 11 s after the charge, not before.
        assertThat(decideAt(key, limit, chargedAt + 10_500_000)).as("10.5 s after the charge").isFalse();
        assertThat(decideAt(key, limit, chargedAt + 11_500_000)).as("11.5 s after the charge").isTrue();
    }

    // ---- the model: charge.lua's arithmetic, in doubles as Lua has it ----

    record TokenState(double tokens, double ts, long pexpireMillis) {
    }

    record WindowState(double window, double count, double previous, long pexpireMillis) {
    }

    static TokenState chargeTokenBucket(TokenBucketLimit limit, Map<String, String> prior, double now, double charge) {
        double capacity = limit.capacity();
        double rate = limit.tokensPerSecond() / 1000000;
        double fill = capacity / rate;
        Double tokens = number(prior.get("t"));
        Double last = number(prior.get("ts"));
        if (tokens == null || last == null) {
            tokens = capacity;
            last = now;
        }
        else if (last > now + fill) {
            last = now;
        }
        double level = Math.min(capacity, tokens + Math.max(0, now - last) * rate);
        level = Math.max(-capacity, level - charge);
        double ttl = Math.ceil((capacity - level) / rate / 1000) + SLACK_MILLIS;
        return new TokenState(level, Math.max(now, last), pexpire(ttl));
    }

    static WindowState chargeWindow(SlidingWindowLimit limit, Map<String, String> prior, double index, double charge,
            double chargeBefore) {
        double max = limit.limit();
        Double window = number(prior.get("w"));
        Double count = number(prior.get("c"));
        Double previous = number(prior.get("p"));
        double current = count != null ? count : 0;
        double before = previous != null ? previous : 0;
        if (window == null) {
            window = index;
            current = 0;
            before = 0;
        }
        else if (window < index) {
            before = window == index - 1 ? current : 0;
            current = 0;
            window = index;
        }
        current = current + Math.min(charge, max);
        if (window == index) {
            before = before + Math.min(chargeBefore, max);
        }
        return new WindowState(window, current, before, pexpire(2.0 * limit.window().toMillis() + SLACK_MILLIS));
    }

    private static long pexpire(double ttl) {
        return (long) Math.max(1, Math.min(MAX_TTL_MILLIS, Math.ceil(ttl)));
    }

    /** Lua's {@code tonumber} for what this test writes (decimal numbers), nil for anything else. */
    private static Double number(String text) {
        if (text == null) {
            return null;
        }
        try {
            return Double.parseDouble(text);
        }
        catch (NumberFormatException ex) {
            return null;
        }
    }

    // ---- one case: write, charge, read back, compare ----

    /** What a key holds before the charge; hash fields are computed from the server clock (µs) when written. */
    record Before(String label, boolean otherType, LongFunction<Map<String, String>> fields) {

        static Before absent() {
            return new Before("absent", false, clock -> Map.of());
        }

        static Before anotherType() {
            return new Before("a string", true, clock -> Map.of());
        }

        static Before hash(String label, LongFunction<Map<String, String>> fields) {
            return new Before(label, false, fields);
        }
    }

    /** A bucket's prior state and its charge: to the window in progress (or the tokens), and to the window before. */
    record Bucket(Limit limit, Before before, double charge, double chargeBefore) {

        Bucket(Limit limit, Before before, double charge) {
            this(limit, before, charge, 0);
        }
    }

    record Case(String label, List<Bucket> buckets) {
    }

    private static void check(Case scenario, String name) {
        List<Bucket> buckets = scenario.buckets();
        List<String> names = new ArrayList<>();
        List<FallbackCharges.Charge> sent = new ArrayList<>();
        for (int j = 0; j < buckets.size(); j++) {
            Check check = check(buckets.get(j).limit(), "case", "r" + j);
            names.add(keys.bucket(check.bucket()));
            sent.add(new FallbackCharges.Charge(check, buckets.get(j).charge(), buckets.get(j).chargeBefore()));
        }
        raw.del(names.toArray(String[]::new));
        long clock = serverMicros();
        List<Map<String, String>> priors = new ArrayList<>();
        for (int j = 0; j < buckets.size(); j++) {
            priors.add(write(names.get(j), buckets.get(j), clock));
        }

        long startedAt = System.nanoTime();
        long before = serverMicros();
        charges.charge(sent).block(Duration.ofSeconds(10));
        long after = serverMicros();
        List<Map<String, String>> results = new ArrayList<>();
        List<Long> ttls = new ArrayList<>();
        for (String key : names) {
            results.add(hash(key, "t", "ts", "w", "c", "p"));
            ttls.add(raw.pttl(key));
        }
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt) + 1;

        for (int j = 0; j < buckets.size(); j++) {
            Bucket bucket = buckets.get(j);
            Map<String, String> result = results.get(j);
            String where = name + ", bucket " + j + ": " + bucket.limit() + ", before " + bucket.before().label() + " "
                    + priors.get(j) + ", charge " + bucket.charge() + " (before: " + bucket.chargeBefore()
                    + "), clock in [" + before + ", " + after + "]: got "
                    + result + " ttl " + ttls.get(j);
            long expectedTtl;
            if (bucket.limit() instanceof TokenBucketLimit limit) {
                double written = number(result.get("ts"));
                assertThat(written).as("bucket time not before the script's clock: " + where)
                        .isGreaterThanOrEqualTo(before);
                TokenState expected = chargeTokenBucket(limit, priors.get(j), Math.min(written, after), bucket.charge());
                assertThat(number(result.get("t"))).as("tokens: " + where + ", model " + expected)
                        .isEqualTo(expected.tokens());
                assertThat(written).as("ts: " + where + ", model " + expected).isEqualTo(expected.ts());
                expectedTtl = expected.pexpireMillis();
            }
            else {
                SlidingWindowLimit limit = (SlidingWindowLimit) bucket.limit();
                double windowMicros = limit.window().toMillis() * 1000.0;
                List<WindowState> candidates = new ArrayList<>();
                for (double index = Math.floor(before / windowMicros); index <= Math.floor(after / windowMicros);
                        index++) {
                    candidates.add(chargeWindow(limit, priors.get(j), index, bucket.charge(), bucket.chargeBefore()));
                }
                WindowState actual = new WindowState(number(result.get("w")), number(result.get("c")),
                        number(result.get("p")), candidates.get(0).pexpireMillis());
                assertThat(candidates).as("window state: " + where).contains(actual);
                expectedTtl = actual.pexpireMillis();
            }
            assertThat(ttls.get(j)).as("ttl: " + where + ", model " + expectedTtl)
                    .isBetween(expectedTtl - elapsedMillis, expectedTtl);
        }
    }

    /** Writes the prior state; returns the hash fields as Redis holds them (none for a key of another type). */
    private static Map<String, String> write(String key, Bucket bucket, long clock) {
        if (bucket.before().otherType()) {
            raw.set(key, "garbage");
            assertThat(raw.type(key)).isEqualTo("string");
            return Map.of();
        }
        Map<String, String> fields = bucket.before().fields().apply(clock);
        if (!fields.isEmpty()) {
            raw.hset(key, fields);
        }
        return hash(key, "t", "ts", "w", "c", "p");
    }

    private static Map<String, String> hash(String key, String... fields) {
        Map<String, String> values = new LinkedHashMap<>();
        for (KeyValue<String, String> field : raw.hmget(key, fields)) {
            if (field.hasValue()) {
                values.put(field.getKey(), field.getValue());
            }
        }
        return values;
    }

    private static Check check(Limit limit, String client, String ruleId) {
        Rule rule = new Rule(ruleId, ruleId, Match.ANY, List.of(Dimension.API_KEY), limit, 0, Mode.ENFORCE,
                FailureMode.LOCAL);
        return new Check(rule, new BucketKey(ClientIds.unkeyed().of(client), ruleId), 1, false);
    }

    private static long serverMicros() {
        List<String> time = raw.time();
        return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
    }

    /**
     * Decides a request of 1 by rate_limit.lua with the store's clock moved ahead to {@code atMicros} (or a little
     * later: the call takes time); never stale.
     */
    private static boolean decideAt(String key, TokenBucketLimit limit, long atMicros) {
        List<Object> reply = connection.connection().<List<Object>>script(LimiterScript.RATE_LIMIT,
                ScriptOutputType.MULTI, new String[] { key }, "1000", Long.toString(atMicros - serverMicros()), "0",
                "1", "1", "t", Long.toString(limit.capacity()), Double.toString(limit.tokensPerSecond()), "1", "0")
                .orTimeout(10, TimeUnit.SECONDS).join();
        return (Long) reply.get(0) == 1L;
    }

    // ---- cases ----

    private static List<Case> edgeCases() {
        TokenBucketLimit ten = TokenBucketLimit.of("t.", 10, 1, Duration.ofSeconds(1));
        TokenBucketLimit thirds = TokenBucketLimit.of("t.", 7, 10, Duration.ofSeconds(3));
        long fill = ten.window().toNanos() / 1_000;
        SlidingWindowLimit window = SlidingWindowLimit.of("w.", 100, Duration.ofMinutes(1));
        long windowMicros = window.window().toMillis() * 1_000;
        List<Case> cases = new ArrayList<>();
        cases.add(one("empty key", ten, Before.absent(), 1));
        cases.add(one("empty key, charge 0", ten, Before.absent(), 0));
        cases.add(one("at capacity", ten, tokens(10, 0), 2.5));
        cases.add(one("at capacity, long idle", ten, tokens(10, -10 * fill), 3));
        cases.add(one("at -capacity", ten, tokens(-10, 0), 1));
        cases.add(one("at -capacity, 3 s ago", ten, tokens(-10, -3_000_000), 1));
        cases.add(one("above capacity", ten, tokens(15, 0), 1));
        cases.add(one("charge 0", thirds, tokens(4.2, -1_234_567), 0));
        cases.add(one("fractional charge", thirds, tokens(4.2, -100_000), 0.37));
        cases.add(one("fractional tokens and charge", thirds, tokens(-3.3333333333333335, -2_500_001), 1e-9));
        cases.add(one("huge charge", ten, tokens(5, 0), 1e15));
        cases.add(one("huger charge", thirds, tokens(7, 0), 1e300));
        cases.add(one("another type", ten, Before.anotherType(), 4));
        cases.add(one("tokens without ts", ten, Before.hash("t only", clock -> Map.of("t", "3")), 1));
        cases.add(one("ts ahead within fill", ten, tokens(2, fill / 2), 1));
        cases.add(one("ts ahead beyond fill", ten, tokens(2, fill + 10_000_000), 1));
        cases.add(one("ts ahead far beyond fill", thirds, tokens(-7, 400L * 24 * 3600 * 1_000_000), 6));
        cases.add(one("window: empty key", window, Before.absent(), 3));
        cases.add(one("window: same window", window, window(0, 4, 2, windowMicros), 1.5));
        cases.add(one("window: older by 1", window, window(-1, 5, 3, windowMicros), 2));
        cases.add(one("window: older by many", window, window(-7, 5, 3, windowMicros), 2));
        cases.add(one("window: ahead by 1", window, window(1, 5, 3, windowMicros), 2));
        cases.add(one("window: ahead by many", window, window(9, 5, 3, windowMicros), 2));
        cases.add(one("window: charge beyond the limit", window, window(0, 40, 10, windowMicros), 250));
        cases.add(one("window: charge 0", window, window(0, 40, 10, windowMicros), 0));
        cases.add(one("window: another type", window, Before.anotherType(), 7));
        cases.add(one("window: index without counts", window,
                Before.hash("w only", clock -> Map.of("w", Long.toString(Math.floorDiv(clock, windowMicros)))), 2));
        cases.add(new Case("window: a charge to the window before, same window", List.of(new Bucket(window,
                window(0, 4, 2, windowMicros), 1.5, 3))));
        cases.add(new Case("window: a charge to the window before, window moved on", List.of(new Bucket(window,
                window(-1, 5, 3, windowMicros), 2, 4))));
        cases.add(new Case("window: a charge to the window before, stored window ahead", List.of(new Bucket(window,
                window(1, 5, 3, windowMicros), 2, 4))));
        cases.add(new Case("window: only the window before, beyond the limit", List.of(new Bucket(window,
                window(0, 40, 10, windowMicros), 0, 250))));
        cases.add(new Case("several keys in one call", List.of(new Bucket(ten, tokens(-2, -500_000), 3),
                new Bucket(window, window(-1, 60, 0, windowMicros), 5), new Bucket(thirds, Before.absent(), 7.5))));
        return cases;
    }

    private static Case one(String label, Limit limit, Before before, double charge) {
        return new Case(label, List.of(new Bucket(limit, before, charge)));
    }

    private static Before tokens(double tokens, long tsOffsetMicros) {
        return Before.hash("t=" + tokens + " ts=clock" + (tsOffsetMicros >= 0 ? "+" : "") + tsOffsetMicros,
                clock -> Map.of("t", Double.toString(tokens), "ts", Long.toString(clock + tsOffsetMicros)));
    }

    private static Before window(long indexOffset, double count, double previous, long windowMicros) {
        return Before.hash("w=index" + (indexOffset >= 0 ? "+" : "") + indexOffset + " c=" + count + " p=" + previous,
                clock -> Map.of("w", Long.toString(Math.floorDiv(clock, windowMicros) + indexOffset), "c",
                        Double.toString(count), "p", Double.toString(previous)));
    }

    private static Case randomCase(Random random) {
        int size = 1 + random.nextInt(3);
        List<Bucket> buckets = new ArrayList<>();
        for (int j = 0; j < size; j++) {
            buckets.add(random.nextInt(10) < 6 ? randomTokenBucket(random) : randomWindow(random));
        }
        return new Case("random", buckets);
    }

    private static Bucket randomTokenBucket(Random random) {
        TokenBucketLimit limit = null;
        while (limit == null) {
            long capacity = switch (random.nextInt(4)) {
                case 0 -> 1;
                case 1 -> 1 + random.nextInt(100);
                case 2 -> 1 + random.nextInt(1_000_000);
                default -> 1 + (long) (random.nextDouble() * 1e12);
            };
            long refill = random.nextBoolean() ? 1 + random.nextInt(100) : 1 + random.nextInt(1_000_000);
            Duration period = Duration.ofMillis(1 + (long) Math.pow(10, random.nextDouble() * 8));
            try {
                limit = TokenBucketLimit.of("random.", capacity, refill, period);
            }
            catch (InvalidLimitException tooSlowToFill) {
                // draw again
            }
        }
        double capacity = limit.capacity();
        long fill = limit.window().toNanos() / 1_000;
        Before before = switch (random.nextInt(10)) {
            case 0 -> Before.absent();
            case 1 -> Before.anotherType();
            case 2 -> Before.hash("ts only", clock -> Map.of("ts", Long.toString(clock)));
            default -> {
                double tokens = switch (random.nextInt(6)) {
                    case 0 -> capacity;
                    case 1 -> -capacity;
                    case 2 -> 0;
                    case 3 -> capacity * (1 + random.nextDouble());
                    default -> (random.nextDouble() * 2 - 1) * capacity;
                };
                long offset = switch (random.nextInt(6)) {
                    case 0 -> 0;
                    case 1 -> (long) (random.nextDouble() * 0.9 * fill);
                    case 2 -> fill + 5_000_000 + (long) (random.nextDouble() * fill);
                    case 3 -> -(long) (random.nextDouble() * 1e12);
                    default -> -(long) (random.nextDouble() * 2 * fill);
                };
                yield tokens(tokens, offset);
            }
        };
        return new Bucket(limit, before, randomCharge(random, capacity));
    }

    private static Bucket randomWindow(Random random) {
        long max = random.nextInt(4) == 0 ? 1 + (long) (random.nextDouble() * 1e12) : 1 + random.nextInt(10_000);
        SlidingWindowLimit limit = SlidingWindowLimit.of("random.", max,
                Duration.ofMillis(100 + (long) Math.pow(10, random.nextDouble() * 9.5)));
        long windowMicros = limit.window().toMillis() * 1_000;
        Before before = switch (random.nextInt(8)) {
            case 0 -> Before.absent();
            case 1 -> Before.anotherType();
            default -> {
                long offset = switch (random.nextInt(5)) {
                    case 0 -> 0;
                    case 1 -> -1;
                    case 2 -> -2 - random.nextInt(1_000);
                    case 3 -> 1;
                    default -> 2 + random.nextInt(5);
                };
                double count = random.nextInt(4) == 0 ? max : random.nextDouble() * 1.2 * max;
                double previous = random.nextInt(4) == 0 ? 0 : random.nextDouble() * 1.2 * max;
                yield window(offset, count, previous, windowMicros);
            }
        };
        return new Bucket(limit, before, randomCharge(random, max),
                random.nextBoolean() ? 0 : randomCharge(random, max));
    }

    private static double randomCharge(Random random, double quota) {
        return switch (random.nextInt(8)) {
            case 0 -> 0;
            case 1 -> 1;
            case 2 -> 1 + Math.floor(random.nextDouble() * quota);
            case 3 -> 1e-9;
            case 4 -> quota * 1e6;
            default -> random.nextDouble() * 2 * quota;
        };
    }
}

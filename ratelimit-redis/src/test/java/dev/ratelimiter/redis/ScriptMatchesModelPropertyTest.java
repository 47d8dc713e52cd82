package dev.ratelimiter.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.ratelimiter.core.AlgorithmModel;
import dev.ratelimiter.core.CalendarPeriods;
import dev.ratelimiter.core.CalendarQuotaLimit;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;
import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import io.lettuce.core.ScriptOutputType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import static dev.ratelimiter.testsupport.property.Gen.weighted;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * rate_limit.lua against the Java model of each algorithm ({@link AlgorithmModel}: the arithmetic local mode runs),
 * for random limits and random sequences of (time step, cost): every decision, the tokens or counts left and the
 * remaining the script reports equal the model's.
 *
 * <p>The script reads Redis's clock, which moves while the test runs, so each call is placed at a target time with
 * the script's clock shift and its true time is known only within [target, target + the call's duration]. That is
 * enough for an exact comparison: an allowed token-bucket call writes its true time ({@code ts}), at which the model
 * must allow and leave the same tokens; a refused call must be refused by the model at the target (tokens only grow
 * with time); a window's counts do not depend on where in the window the call fell.
 */
class ScriptMatchesModelPropertyTest {

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

    record Call(long stepMicros, int cost) {
    }

    record Bucket(long capacity, long refillTokens, long refillPeriodMillis, List<Call> calls) {
    }

    record Window(long limit, long windowMillis, List<Call> calls) {
    }

    private static Gen<Bucket> buckets() {
        return Gen.zip(Gen.longs(1, 1_000), Gen.longs(1, 1_000), Gen.longs(1, 60_000), List::of).flatMap(drawn -> {
            long capacity = drawn.get(0);
            long tokens = drawn.get(1);
            long periodMillis = drawn.get(2);
            long fillMicros = (long) Math.min(1e12, capacity * (periodMillis * 1_000.0 / tokens));
            Gen<Long> steps = Gen.frequency(weighted(3, Gen.just(0L)),
                    weighted(10, Gen.longs(1, Math.max(2, fillMicros / 10))),
                    weighted(3, Gen.longs(1, Math.max(2, fillMicros * 2))), weighted(1, Gen.longs(1, 5_000)));
            return calls(steps, costs(capacity)).map(calls -> new Bucket(capacity, tokens, periodMillis, calls));
        });
    }

    private static Gen<Window> windows() {
        return Gen.zip(Gen.longs(1, 1_000), Gen.longs(50, 120_000), List::of).flatMap(drawn -> {
            long limit = drawn.get(0);
            long windowMillis = drawn.get(1);
            long windowMicros = windowMillis * 1_000;
            Gen<Long> steps = Gen.frequency(weighted(3, Gen.just(0L)), weighted(10, Gen.longs(1, windowMicros / 5)),
                    weighted(3, Gen.longs(1, windowMicros * 3)));
            return calls(steps, costs(limit)).map(calls -> new Window(limit, windowMillis, calls));
        });
    }

    /** Mostly single requests, some up to the whole quota, a few beyond it. */
    private static Gen<Integer> costs(long quota) {
        return Gen.frequency(weighted(6, Gen.just(1)), weighted(3, Gen.ints(1, (int) quota)),
                weighted(1, Gen.ints(1, (int) quota + 3)));
    }

    private static Gen<List<Call>> calls(Gen<Long> steps, Gen<Integer> costs) {
        return Gen.zip(steps, costs, Call::new).list(1, 40);
    }

    @TestFactory
    Stream<DynamicTest> aTokenBucketDecidesAndLeavesWhatTheModelDoes() {
        return Property.forAll(buckets()).tries(150).check(ScriptMatchesModelPropertyTest::tokenBucketMatchesModel);
    }

    private static void tokenBucketMatchesModel(Bucket bucket) throws Exception {
        TokenBucketLimit limit = new TokenBucketLimit(bucket.capacity(), bucket.refillTokens(),
                Duration.ofMillis(bucket.refillPeriodMillis()));
        String key = "rl:model:t";
        redis.command("DEL", key);
        long target = serverMicros() + 1_000_000_000L; // ahead of the real clock: calls never land in the past
        AlgorithmModel model = null;
        long latest = target;
        for (Call call : bucket.calls()) {
            // after the previous call's true time, whatever it was: the store's clock only moves forward here
            target = Math.max(target, latest) + call.stepMicros();
            Placed placed = call(key, target, List.of("t", Long.toString(limit.capacity()),
                    Double.toString(limit.tokensPerSecond()), Integer.toString(call.cost()), "0"));
            latest = placed.latest();
            if (model == null) {
                // the script creates the bucket full at its first call's true time; the model does the same at the
                // time it wrote, or (refused: nothing written) at the target
                long created = placed.allowed() ? field(key, "ts") : target;
                model = AlgorithmModel.of(limit, created * 1_000);
            }
            String where = bucket + " at " + target;
            if (placed.allowed()) {
                long trueMicros = field(key, "ts");
                assertThat(trueMicros).as(where).isBetween(target, placed.latest());
                AlgorithmModel.Step step = model.preview(call.cost(), trueMicros * 1_000);
                assertThat(step.allowed()).as("model allows what the script allowed: " + where).isTrue();
                double tokens = Double.parseDouble(redis.command("HGET", key, "t").trim());
                double tolerance = 1e-9 * Math.max(1, limit.capacity());
                assertThat(tokens).as("tokens left: " + where).isCloseTo(step.newValue(),
                        org.assertj.core.data.Offset.offset(tolerance));
                // Whole tokens left: the same, except where the tokens left lie within that tolerance of a whole
                // number, where the script (microseconds, Lua doubles) and the model (nanoseconds) may round the
                // same real number to either side of it (seen once: 115 against 116).
                assertThat(placed.remaining()).as("remaining: " + where).isBetween(
                        Math.min(step.remaining(), (long) Math.floor(step.newValue() - tolerance)),
                        Math.max(step.remaining(), (long) Math.floor(step.newValue() + tolerance)));
                model.commit(step);
            }
            else {
                AlgorithmModel.Step step = model.preview(call.cost(), target * 1_000);
                assertThat(step.allowed()).as("model refuses what the script refused: " + where).isFalse();
            }
        }
    }

    @TestFactory
    Stream<DynamicTest> aSlidingWindowDecidesAndCountsWhatTheModelDoes() {
        return Property.forAll(windows()).tries(150).check(ScriptMatchesModelPropertyTest::slidingWindowMatchesModel);
    }

    private static void slidingWindowMatchesModel(Window window) throws Exception {
        SlidingWindowLimit limit = new SlidingWindowLimit(window.limit(), Duration.ofMillis(window.windowMillis()));
        long windowMicros = window.windowMillis() * 1_000;
        String key = "rl:model:w";
        redis.command("DEL", key);
        long target = serverMicros() + 1_000_000_000L;
        AlgorithmModel model = AlgorithmModel.of(limit, target * 1_000);
        long latest = target;
        for (Call call : window.calls()) {
            target = Math.max(target, latest) + call.stepMicros();
            Placed placed = call(key, target, List.of("w", Long.toString(limit.limit()),
                    Long.toString(window.windowMillis()), Integer.toString(call.cost()), "0"));
            latest = placed.latest();
            String where = window + " at " + target;
            boolean sameWindow = Math.floorDiv(target, windowMicros) == Math.floorDiv(placed.latest(), windowMicros);
            if (placed.allowed()) {
                // The script ran in the window it wrote, no later than the latest moment of it the call can have run
                // at; within a window the estimate only falls, so the model must allow there, and a window's counts
                // do not depend on where in it the call fell.
                long index = field(key, "w");
                long at = Math.min(placed.latest(), (index + 1) * windowMicros - 1);
                AlgorithmModel.Step step = model.preview(call.cost(), at * 1_000);
                assertThat(index).as(where).isEqualTo(step.stamp());
                assertThat(step.allowed()).as("model allows what the script allowed: " + where).isTrue();
                assertThat(Double.parseDouble(redis.command("HGET", key, "c").trim())).as("count: " + where)
                        .isEqualTo(step.newValue());
                assertThat(Double.parseDouble(redis.command("HGET", key, "p").trim())).as("previous: " + where)
                        .isEqualTo(step.previous());
                model.commit(step);
            }
            else if (sameWindow) {
                // refused at the true time means refused at the target, the earliest it can have run at
                assertThat(model.preview(call.cost(), target * 1_000).allowed())
                        .as("model refuses what the script refused: " + where).isFalse();
            }
        }
    }

    record Quota(long limit, String period, String zone, Integer anchorDay, long startMicros, List<Call> calls) {
    }

    /** Instants a quota's calls start near: daylight-saving days in Berlin, leap February, a year's end. */
    private static final List<Instant> NEAR = List.of(Instant.parse("2026-03-29T21:00:00Z"),
            Instant.parse("2026-10-25T22:00:00Z"), Instant.parse("2028-02-28T22:00:00Z"),
            Instant.parse("2028-02-29T23:00:00Z"), Instant.parse("2026-12-31T20:00:00Z"));

    private static Gen<Quota> quotas() {
        Gen<String> zones = Gen.elements("UTC", "Europe/Berlin", "America/Santiago", "Asia/Kathmandu");
        Gen<String> periods = Gen.elements("day", "week", "month");
        return Gen.zip(Gen.longs(1, 1_000), periods, zones, Gen.ints(1, 31), List::<Object>of).flatMap(drawn -> {
            long limit = (Long) drawn.get(0);
            String period = (String) drawn.get(1);
            Integer anchor = "month".equals(period) ? (Integer) drawn.get(3) : null;
            long periodMicros = switch (period) {
                case "day" -> 86_400_000_000L;
                case "week" -> 7 * 86_400_000_000L;
                default -> 30 * 86_400_000_000L;
            };
            // Mostly calls within a period, some across one or several boundaries.
            Gen<Long> steps = Gen.frequency(weighted(3, Gen.just(0L)), weighted(6, Gen.longs(1, 60_000_000L)),
                    weighted(3, Gen.longs(1, periodMicros / 3)), weighted(1, Gen.longs(1, periodMicros * 2)));
            return Gen.zip(Gen.elements(NEAR), Gen.longs(0, periodMicros), calls(steps, costs(limit)),
                    (near, offset, calls) -> new Quota(limit, period, (String) drawn.get(2), anchor,
                            near.getEpochSecond() * 1_000_000L - offset / 4, calls));
        });
    }

    @TestFactory
    Stream<DynamicTest> aCalendarQuotaDecidesAndCountsWhatTheModelDoes() {
        return Property.forAll(quotas()).tries(150).check(ScriptMatchesModelPropertyTest::calendarQuotaMatchesModel);
    }

    /**
     * Each call is sent the period holding its target, as the store sends the period holding its view of the
     * store's clock. A call that ran past that period's end answers reset-after -1 and writes nothing; every other is
     * decided in the period sent, where the model, whose count does not depend on where in a period a call fell,
     * must decide the same and count the same.
     */
    private static void calendarQuotaMatchesModel(Quota quota) throws Exception {
        CalendarQuotaLimit limit = CalendarQuotaLimit.of("q.", quota.limit(), quota.period(), quota.zone(),
                quota.anchorDay(), null);
        redis.command("FLUSHDB");
        long target = quota.startMicros();
        AlgorithmModel model = AlgorithmModel.of(limit, target * 1_000);
        for (Call call : quota.calls()) {
            target += call.stepMicros();
            CalendarPeriods.Span span = limit.spanAt(Instant.ofEpochSecond(0, target * 1_000));
            long start = span.start().getEpochSecond() * 1_000_000L + span.start().getNano() / 1_000;
            long end = span.end().getEpochSecond() * 1_000_000L + span.end().getNano() / 1_000;
            String key = "rl:model:q:" + limit.periodName(span);
            double before = count(key);
            long shift = target - serverMicros();
            List<String> args = List.of("1000", Long.toString(shift), "0", "1", "1", "q",
                    Long.toString(limit.limit()), start + ":" + end, Integer.toString(call.cost()), "0");
            List<Long> reply = connection.connection().<List<Long>>script(LimiterScript.RATE_LIMIT,
                    ScriptOutputType.MULTI, new String[] { key }, args.toArray(String[]::new))
                    .get(5, TimeUnit.SECONDS);
            String where = quota + " at " + target;
            if (reply.get(4) == -1L) {
                assertThat(serverMicros() + shift).as("only a call past its period's end: " + where)
                        .isGreaterThanOrEqualTo(end);
                assertThat(count(key)).as("nothing written: " + where).isEqualTo(before);
                continue;
            }
            AlgorithmModel.Step step = model.preview(call.cost(), target * 1_000);
            assertThat(reply.get(0) == 1L).as("decision: " + where).isEqualTo(step.allowed());
            assertThat(reply.get(2)).as("remaining: " + where).isEqualTo(step.remaining());
            assertThat(reply.get(4)).as("reset: to the period's end, " + where).isBetween(0L, end - target);
            if (step.allowed()) {
                assertThat(count(key)).as("count: " + where).isEqualTo(step.newValue());
                model.commit(step);
            }
            else {
                assertThat(reply.get(3)).as("retry-after: the boundary, " + where).isEqualTo(reply.get(4));
                assertThat(count(key)).as("nothing spent: " + where).isEqualTo(before);
            }
        }
    }

    private static double count(String key) {
        String value = redis.command("HGET", key, "c");
        return value == null || value.isBlank() ? 0 : Double.parseDouble(value.trim());
    }

    /** A call's outcome and the latest script time it can have run at. */
    record Placed(boolean allowed, long remaining, long latest) {
    }

    private static Placed call(String key, long targetMicros, List<String> check) throws Exception {
        long shift = targetMicros - serverMicros();
        List<String> args = new ArrayList<>(List.of("1000", Long.toString(shift), "0", "1", "1"));
        args.addAll(check);
        List<Long> reply = connection.connection().<List<Long>>script(LimiterScript.RATE_LIMIT,
                ScriptOutputType.MULTI, new String[] { key }, args.toArray(String[]::new))
                .get(5, TimeUnit.SECONDS);
        long latest = serverMicros() + shift;
        return new Placed(reply.get(0) == 1L, reply.get(2), latest);
    }

    private static long field(String key, String field) {
        return (long) Double.parseDouble(redis.command("HGET", key, field).trim());
    }

    private static long serverMicros() {
        String[] parts = redis.command("TIME").trim().split("\\s+");
        return Long.parseLong(parts[0]) * 1_000_000 + Long.parseLong(parts[1]);
    }
}

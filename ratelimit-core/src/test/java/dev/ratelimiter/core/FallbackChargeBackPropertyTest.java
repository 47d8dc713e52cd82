package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One instance (share factor 1) in front of a store that answers, stops answering and answers again: what it admits —
 * the store's decisions while it answers, its fallback's while it does not, the fallback's admissions charged to the
 * store when it answers again — stays within one request of what an exact limiter (the store deciding every request)
 * admits above, and within one request per return of the store (plus one) below: each return may lose the fraction of
 * a token the fallback did not start from (it starts from whole tokens).
 *
 * <p>The store is a Java model of the Redis token bucket with the scripts' arithmetic (rate_limit.lua: refilled up to
 * capacity, a request spends a token if there is one; charge.lua: refilled, then charged down to at most minus the
 * capacity), on the test's clock. Edge cases first, then seeded random ones; replay a failure with
 * {@code -Dratelimit.chargeback.seed=…}: case {@code i} of the random ones draws from {@code new Random(seed + i)}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FallbackChargeBackPropertyTest {

    private static final long SEED = Long.getLong("ratelimit.chargeback.seed", 20_261_205L);
    private static final int RANDOM_CASES = 500;
    private static final long MS = 1_000_000;
    /** Where the test's clock starts: far from 0, as {@link System#nanoTime} is. */
    private static final long EPOCH = 1_000_000 * MS;

    @Test
    void edgeCasesAdmitWhatAnExactLimiterDoesWithinTheBounds() {
        List<Scenario> cases = edgeCases();
        for (int i = 0; i < cases.size(); i++) {
            check(cases.get(i), "edge case " + i + " (" + cases.get(i).label() + ")");
        }
    }

    @Test
    void randomCasesAdmitWhatAnExactLimiterDoesWithinTheBounds() {
        for (int i = 0; i < RANDOM_CASES; i++) {
            check(randomScenario(new Random(SEED + i)), "random case " + i + " of seed " + SEED);
        }
    }

    /**
     * The smallest case random case 123 (and 267, 361, 495) of seed 20261205 shrinks to. The store answers one request
     * between two outages: it reports what it holds before the fallback's admissions of the first outage are charged to
     * it, the fallback continues from that, and admits them again in the second outage.
     */
    @Test
    void aStoreThatAnswersOnceBetweenTwoOutagesDoesNotLetTheFallbackAdmitTheFirstOutagesRequestsAgain() {
        // 3 tokens, 1 back an hour: nothing refills. Up at 0 ms, down [10, 30), up at 30 ms, down from 40 ms on.
        TokenBucketLimit three = TokenBucketLimit.of("s.", 3, 1, Duration.ofHours(1));
        Scenario scenario = new Scenario("answers once between two outages", three, every(10 * MS, 6),
                new long[][] { { 10 * MS, 30 * MS }, { 40 * MS, 100_000 * MS } });
        boolean[] decisions = decisionsWithFallback(scenario);
        assertThat(Arrays.copyOfRange(decisions, 0, 3)).as("the 3 tokens: by the store, then 2 by the fallback")
                .containsExactly(true, true, true);
        assertThat(Arrays.copyOfRange(decisions, 4, 6))
                .as("second outage: the store was charged the first outage's 2 admissions and holds nothing")
                .containsExactly(false, false);
        check(scenario, "shrunk case");
    }

    /** A limit, request arrival times and the periods [start, end) the store does not answer, in ns from the start. */
    record Scenario(String label, TokenBucketLimit limit, long[] arrivals, long[][] downs) {

        boolean up(long at) {
            for (long[] down : downs) {
                if (at >= down[0] && at < down[1]) {
                    return false;
                }
            }
            return true;
        }

        /** Times the store answers again while requests still arrive. */
        int returns() {
            long last = arrivals.length == 0 ? 0 : arrivals[arrivals.length - 1];
            return (int) Arrays.stream(downs).filter(down -> down[1] <= last).count();
        }

        @Override
        public String toString() {
            StringBuilder text = new StringBuilder(label).append(": ").append(limit).append(", down (ms) ");
            for (long[] down : downs) {
                text.append('[').append(down[0] / (double) MS).append(", ").append(down[1] / (double) MS).append(") ");
            }
            return text.toString();
        }
    }

    private static void check(Scenario scenario, String name) {
        boolean[] exact = exactDecisions(scenario);
        boolean[] withFallback = decisionsWithFallback(scenario);
        int exactCount = count(exact);
        int admitted = count(withFallback);
        Supplier<String> where = () -> name + ": " + scenario + "\n" + trace(scenario, exact, withFallback);
        assertThat(admitted).as(() -> "admitted, against " + exactCount + " by an exact limiter, " + scenario.returns()
                + " return(s) of the store: " + where.get())
                .isLessThanOrEqualTo(exactCount + 1)
                .isGreaterThanOrEqualTo(exactCount - scenario.returns() - 1);
        if (scenario.downs().length == 0) {
            assertThat(withFallback).as(() -> "a store that always answers decides alone: " + where.get())
                    .containsExactly(exact);
        }
    }

    private static boolean[] exactDecisions(Scenario scenario) {
        StoreBucket store = new StoreBucket(scenario.limit());
        boolean[] allowed = new boolean[scenario.arrivals().length];
        for (int i = 0; i < allowed.length; i++) {
            allowed[i] = store.take(EPOCH + scenario.arrivals()[i]) >= 0;
        }
        return allowed;
    }

    private static boolean[] decisionsWithFallback(Scenario scenario) {
        AtomicLong clock = new AtomicLong(EPOCH);
        StoreBucket store = new StoreBucket(scenario.limit());
        AtomicBoolean up = new AtomicBoolean();
        AtomicBoolean asked = new AtomicBoolean();
        RateLimitStore redis = checks -> Mono.defer(() -> {
            asked.set(true);
            if (!up.get()) {
                return Mono.error(new StoreTimeoutException("no answer"));
            }
            long remaining = store.take(clock.get());
            return Mono.just(Verdict.evaluated(List.of(new RuleOutcome(checks.get(0), remaining >= 0,
                    remaining >= 0 ? remaining : -1 - remaining, Duration.ZERO, Duration.ZERO)), Verdict.Source.STORE));
        });
        FallbackCharges charges = batch -> Mono.fromRunnable(
                () -> batch.forEach(charge -> store.charge(clock.get(), charge.tokens())));
        StoreBreaker breaker = new StoreBreaker("charge-back", StoreBreaker.Settings.DEFAULTS, clock::get);
        WithoutStore withoutStore = new WithoutStore(new LocalBucketStore(100, clock::get), () -> 1,
                StoreMetrics.NONE, WithoutStore.untilBreakerRetries(breaker), 1.0);
        FailSafeStore failSafe = new FailSafeStore(redis, withoutStore, Duration.ofMillis(100), breaker,
                StoreMetrics.NONE, charges, clock::get);
        Check check = Fixtures.check(Fixtures.rule("charge-back", scenario.limit(), Mode.ENFORCE), "client");

        boolean[] allowed = new boolean[scenario.arrivals().length];
        for (int i = 0; i < allowed.length; i++) {
            long at = scenario.arrivals()[i];
            clock.set(EPOCH + at);
            up.set(scenario.up(at));
            asked.set(false);
            allowed[i] = failSafe.evaluate(List.of(check)).block(Duration.ofSeconds(5)).allowed();
            if (asked.get() && up.get()) {
                // An answer sends what the fallback owes, on the background thread: applied before the next request.
                awaitBackground();
            }
        }
        return allowed;
    }

    /** Waits until what the background thread (one thread, in order) was given so far has run. */
    private static void awaitBackground() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Background.scheduler().schedule(() -> done.complete(null));
        done.orTimeout(5, TimeUnit.SECONDS).join();
    }

    /**
     * The Redis token bucket: rate_limit.lua's decision and charge.lua's charge. {@link #take} answers the whole
     * tokens left after an allowed request, or {@code -1 - whole tokens} for a refused one (nothing spent).
     */
    static final class StoreBucket {

        private final double capacity;
        private final double perNano;
        private boolean exists;
        private double tokens;
        private long last;

        StoreBucket(TokenBucketLimit limit) {
            this.capacity = limit.capacity();
            this.perNano = limit.tokensPerSecond() / 1e9;
        }

        private double level(long now) {
            if (!exists) {
                exists = true;
                tokens = capacity;
                last = now;
            }
            return Math.min(capacity, tokens + Math.max(0, now - last) * perNano);
        }

        long take(long now) {
            double level = level(now);
            if (level >= 1) {
                tokens = level - 1;
                last = Math.max(now, last);
                return (long) Math.floor(tokens);
            }
            return -1 - (long) Math.floor(Math.max(0, level));
        }

        void charge(long now, double amount) {
            tokens = Math.max(-capacity, level(now) - amount);
            last = Math.max(now, last);
        }
    }

    // ---- cases ----

    private static List<Scenario> edgeCases() {
        TokenBucketLimit five = TokenBucketLimit.of("e.", 5, 1, Duration.ofSeconds(1));
        TokenBucketLimit ten = TokenBucketLimit.of("e.", 10, 3, Duration.ofMillis(700));
        List<Scenario> cases = new ArrayList<>();
        cases.add(new Scenario("no down period", five, every(100 * MS, 40), new long[0][]));
        cases.add(new Scenario("down from the first request", five, every(50 * MS, 80),
                new long[][] { { 0, 2_000 * MS } }));
        cases.add(new Scenario("down from the first request, never back", ten, every(30 * MS, 60),
                new long[][] { { 0, 100_000 * MS } }));
        cases.add(new Scenario("a very short down period, at a request", five, every(100 * MS, 40),
                new long[][] { { 1_000 * MS, 1_000 * MS + 1 } }));
        cases.add(new Scenario("a very short down period, between requests", five, every(100 * MS, 40),
                new long[][] { { 1_050 * MS, 1_050 * MS + 1 } }));
        cases.add(new Scenario("a very long down period", ten, every(250 * MS, 200),
                new long[][] { { 2_000 * MS, 40_000 * MS } }));
        cases.add(new Scenario("requests exactly at every switch", five, every(100 * MS, 60),
                new long[][] { { 500 * MS, 1_200 * MS }, { 1_500 * MS, 1_600 * MS }, { 3_000 * MS, 4_000 * MS } }));
        cases.add(new Scenario("flapping every 70 ms", ten, every(20 * MS, 150), flapping(70 * MS, 3_000 * MS)));
        cases.add(new Scenario("a burst at the instant the store returns", five,
                concat(every(100 * MS, 10), repeat(1_500 * MS, 8), every(100 * MS, 10, 1_600 * MS)),
                new long[][] { { 300 * MS, 1_500 * MS } }));
        cases.add(new Scenario("a burst at the instant the store goes", five,
                concat(every(100 * MS, 5), repeat(700 * MS, 8), every(100 * MS, 10, 800 * MS)),
                new long[][] { { 700 * MS, 1_400 * MS } }));
        cases.add(new Scenario("down at the end only", five, every(40 * MS, 100),
                new long[][] { { 3_000 * MS, 10_000 * MS } }));
        cases.add(new Scenario("idle past the fill time while down", five,
                concat(every(10 * MS, 10), every(10 * MS, 10, 20_000 * MS)),
                new long[][] { { 50 * MS, 20_050 * MS } }));
        return cases;
    }

    private static long[][] flapping(long period, long until) {
        List<long[]> downs = new ArrayList<>();
        for (long start = period; start < until; start += 2 * period) {
            downs.add(new long[] { start, start + period });
        }
        return downs.toArray(long[][]::new);
    }

    private static long[] every(long gap, int count) {
        return every(gap, count, 0);
    }

    private static long[] every(long gap, int count, long from) {
        long[] times = new long[count];
        for (int i = 0; i < count; i++) {
            times[i] = from + i * gap;
        }
        return times;
    }

    private static long[] repeat(long at, int count) {
        long[] times = new long[count];
        Arrays.fill(times, at);
        return times;
    }

    private static long[] concat(long[]... parts) {
        return Arrays.stream(parts).flatMapToLong(Arrays::stream).sorted().toArray();
    }

    private static Scenario randomScenario(Random random) {
        TokenBucketLimit limit = TokenBucketLimit.of("r.", 1 + random.nextInt(20), 1 + random.nextInt(5),
                Duration.ofMillis(50 + random.nextInt(5_000)));
        double secondsPerToken = 1 / limit.tokensPerSecond();
        long fill = limit.window().toNanos();
        // Demand from a third of the refill rate to four times it.
        double meanGap = secondsPerToken / (0.3 + random.nextDouble() * 3.7) * 1e9;
        int count = 1 + random.nextInt(80);
        long[] arrivals = new long[count];
        long at = 0;
        for (int i = 0; i < count; i++) {
            if (i > 0 && random.nextInt(10) > 0) {
                at += (long) (-Math.log(1 - random.nextDouble()) * meanGap);
            }
            arrivals[i] = at;
        }
        List<long[]> downs = new ArrayList<>();
        int periods = random.nextInt(6);
        for (int d = 0; d < periods; d++) {
            long start = random.nextInt(4) == 0 ? arrivals[random.nextInt(count)]
                    : (long) (random.nextDouble() * (at + 1));
            long length = switch (random.nextInt(4)) {
                case 0 -> 1 + (long) (random.nextDouble() * MS);
                case 1 -> 1 + (long) (random.nextDouble() * fill);
                case 2 -> fill + (long) (random.nextDouble() * 4 * fill);
                default -> 1 + (long) (random.nextDouble() * meanGap * 5);
            };
            long end = random.nextInt(4) == 0 ? Math.max(start + 1, arrivals[random.nextInt(count)]) : start + length;
            downs.add(new long[] { start, end });
        }
        return new Scenario("random", limit, arrivals, merged(downs));
    }

    /** Sorted, overlapping or touching periods joined. */
    private static long[][] merged(List<long[]> periods) {
        periods.sort((a, b) -> Long.compare(a[0], b[0]));
        List<long[]> joined = new ArrayList<>();
        for (long[] period : periods) {
            long[] previous = joined.isEmpty() ? null : joined.get(joined.size() - 1);
            if (previous != null && period[0] <= previous[1]) {
                previous[1] = Math.max(previous[1], period[1]);
            }
            else {
                joined.add(period.clone());
            }
        }
        return joined.toArray(long[][]::new);
    }

    private static int count(boolean[] decisions) {
        int count = 0;
        for (boolean allowed : decisions) {
            count += allowed ? 1 : 0;
        }
        return count;
    }

    /** Every request: when (ms), whether the store answered, the exact decision and this setup's. */
    private static String trace(Scenario scenario, boolean[] exact, boolean[] withFallback) {
        StringBuilder text = new StringBuilder("  ms        store  exact  fallback-setup\n");
        for (int i = 0; i < exact.length; i++) {
            long at = scenario.arrivals()[i];
            text.append(String.format("  %-9.3f %-6s %-6s %s%n", at / (double) MS, scenario.up(at) ? "up" : "down",
                    exact[i] ? "allow" : "-", withFallback[i] ? "allow" : "-"));
        }
        return text.toString();
    }
}

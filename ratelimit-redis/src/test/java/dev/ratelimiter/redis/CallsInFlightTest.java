package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exact decisions with at most one call to Redis out at a time ({@code ratelimit.store.calls-in-flight: 1}): the
 * decisions that arrive while a call is out go together in the next, so calls carry more decisions under load; every
 * decision is still answered, all or nothing, and none is left waiting behind a call Redis never answers.
 */
class CallsInFlightTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final RedisKeys KEYS = new RedisKeys("rl");

    private final Rule roomy = rule("roomy", 1_000_000, 1_000_000);

    @BeforeEach
    void flush() {
        redis.command("FLUSHALL");
    }

    @Test
    void eightClosedLoopsShareCallsWhenOneCallIsOutAtATime() throws Exception {
        try (TestConnection connection = TestConnection.open(redis.host(), redis.port())) {
            double unlimited = decisionsPerCall(store(connection, 0, Duration.ofSeconds(2)));
            double one = decisionsPerCall(store(connection, 1, Duration.ofSeconds(2)));
            System.out.printf("8 closed loops, 2,400 decisions over 1,000 keys: %.2f decisions per call with no limit, "
                    + "%.2f with one call out at a time%n", unlimited, one);
            // while one call is out, the other seven loops' decisions wait and go together
            assertThat(one).isGreaterThan(unlimited).isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void eightThreadsRacingForOneHundredTokensStillGetExactlyOneHundred() throws Exception {
        try (TestConnection connection = TestConnection.open(redis.host(), redis.port())) {
            RedisRateLimitStore store = store(connection, 1, Duration.ofSeconds(2));
            Rule race = rule("race", 100, 1);
            long allowed = concurrently(8, 300, () -> store.evaluate(List.of(check(race, "racer")))
                    .block(Duration.ofSeconds(10)).allowed() ? 1 : 0);
            assertThat(allowed).isEqualTo(100);
        }
    }

    @Test
    void decisionsWaitingBehindACallToAPausedRedisAreAllAnsweredAndTheNextCallsGoOut() {
        try (TestConnection connection = TestConnection.open(redis.host(), redis.port())) {
            RedisRateLimitStore store = store(connection, 1, Duration.ofMillis(50));
            assertThat(store.evaluate(List.of(check(roomy, "warm"))).block(Duration.ofSeconds(5)).allowed()).isTrue();
            List<Throwable> failures;
            redis.server().pause();
            try {
                failures = Flux.range(0, 40)
                        .flatMap(n -> store.evaluate(List.of(check(roomy, "k-" + n))).then(reactor.core.publisher.Mono
                                .<Throwable>empty()).onErrorResume(reactor.core.publisher.Mono::just), 40)
                        .collectList().block(Duration.ofSeconds(10));
            }
            finally {
                redis.server().resume();
            }
            // the first call times out 50 ms after its write; the ones that waited behind it go out then and time out
            // in their turn: every decision gets its answer (here: a failure, which the fail-safe store decides by)
            assertThat(failures).hasSize(40);
            // and nothing stays held: the next decisions go out and are answered
            for (int n = 0; n < 5; n++) {
                Verdict after = store.evaluate(List.of(check(roomy, "after-" + n))).block(Duration.ofSeconds(5));
                assertThat(after.allowed()).isTrue();
            }
        }
    }

    @Test
    void callsThatAreNeverAnsweredStopHoldingTheOthersBackAfterTwoTimeouts() {
        try (TestConnection connection = TestConnection.open(redis.host(), redis.port())) {
            // the product's defaults: 5 ms timeout, 105 ms longest wait, two calls out
            RedisRateLimitStore store = new RedisRateLimitStore(connection.connection(), KEYS, false,
                    Duration.ofMillis(5), Duration.ofMillis(105), 2);
            // two calls Lettuce buffered when their connection was lost and never wrote: no timer, no answer
            store.batcher().callNeverAnswered();
            store.batcher().callNeverAnswered();
            for (int n = 0; n < 8; n++) {
                // held until those two are ten milliseconds old, not for the longest wait after each new call (which
                // would send every decision past its deadline: refused by Redis as stale, decided by the fallback)
                Verdict verdict = store.evaluate(List.of(check(roomy, "behind-" + n))).block(Duration.ofSeconds(5));
                assertThat(verdict.allowed()).as("decision %d", n).isTrue();
            }
        }
    }

    private double decisionsPerCall(RedisRateLimitStore store) throws Exception {
        long callsBefore = ScriptCalls.of(redis);
        long decisions = concurrently(8, 300, () -> {
            store.evaluate(List.of(check(roomy, "key-" + ThreadLocalRandom.current().nextInt(1_000))))
                    .block(Duration.ofSeconds(10));
            return 1;
        });
        return (double) decisions / (ScriptCalls.of(redis) - callsBefore);
    }

    /** {@code threads} closed loops of {@code each} calls of {@code work}; the sum of what they returned. */
    private static long concurrently(int threads, int each, Callable<Integer> work) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Callable<Long>> loops = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                loops.add(() -> {
                    long sum = 0;
                    for (int i = 0; i < each; i++) {
                        sum += work.call();
                    }
                    return sum;
                });
            }
            long total = 0;
            for (Future<Long> loop : pool.invokeAll(loops, 60, TimeUnit.SECONDS)) {
                total += loop.get();
            }
            return total;
        }
        finally {
            pool.shutdownNow();
        }
    }

    private static RedisRateLimitStore store(TestConnection connection, int callsInFlight, Duration timeout) {
        return new RedisRateLimitStore(connection.connection(), KEYS, false, timeout, timeout.multipliedBy(3),
                callsInFlight);
    }

    /** A token bucket per client of {@code capacity}, refilled by {@code perHour} tokens an hour. */
    private static Rule rule(String id, long capacity, long perHour) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of(id + ".", capacity, perHour, Duration.ofHours(1)), 0, Mode.ENFORCE,
                FailureMode.LOCAL);
    }

    private static Check check(Rule rule, String client) {
        return new Check(rule, new BucketKey(ClientIds.unkeyed().of(client), rule.id()), 1, false);
    }

}

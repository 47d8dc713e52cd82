package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fail-safe store between a store that answers and one that does not: why each fallback decision was taken, a
 * stall counted once by the breaker, the fallback's buckets continuing from the store's last answer, and what they
 * admitted charged to the store once it answers again.
 */
class FallbackContinuityTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final StoreBreaker breaker = new StoreBreaker("test", StoreBreaker.Settings.DEFAULTS, clock::get);
    private final List<String> fallbacks = new CopyOnWriteArrayList<>();
    private final StoreMetrics metrics = new StoreMetrics() {
        @Override
        public void fallbackDecision(FailureMode mode, FallbackReason reason) {
            fallbacks.add(mode.name().toLowerCase() + "/" + reason.label());
        }
    };
    private final List<FallbackCharges.Charge> charged = new CopyOnWriteArrayList<>();
    private final AtomicReference<Function<List<FallbackCharges.Charge>, Mono<Void>>> chargeAnswer =
            new AtomicReference<>(charges -> Mono.empty());
    private final FallbackCharges charges = batch -> Mono.defer(() -> {
        charged.addAll(batch);
        return chargeAnswer.get().apply(batch);
    });

    /** 10 tokens, refilled at 1 an hour: nothing refills during a test. */
    private final Rule rule = new Rule("r", "r", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("r.", 10, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
    private final Check check = Fixtures.check(rule, "client");

    private FailSafeStore failSafe(RateLimitStore store, int instances) {
        WithoutStore withoutStore = new WithoutStore(new LocalBucketStore(100, clock::get), () -> instances, metrics,
                WithoutStore.untilBreakerRetries(breaker), 1.0);
        return new FailSafeStore(store, withoutStore, Duration.ofMillis(100), breaker, metrics, charges, clock::get);
    }

    private static Verdict reported(Check check, long remaining) {
        return Verdict.evaluated(List.of(new RuleOutcome(check, true, remaining, Duration.ZERO, Duration.ZERO)),
                Verdict.Source.STORE);
    }

    private static boolean allowed(FailSafeStore store, Check check) {
        return store.evaluate(List.of(check)).block(Duration.ofSeconds(5)).allowed();
    }

    @Test
    void eachFallbackDecisionSaysWhyTheStoreCouldNotDecide() {
        AtomicReference<Mono<Verdict>> answer = new AtomicReference<>();
        FailSafeStore store = failSafe(checks -> answer.get(), 1);

        answer.set(Mono.error(new StoreTimeoutException("silent")));
        allowed(store, check);
        answer.set(Mono.error(new StoreNotConnectedException("down")));
        allowed(store, check);
        answer.set(Mono.error(new IllegalStateException("ERR something")));
        allowed(store, check);
        answer.set(Mono.never());
        allowed(store, check);
        breaker.open();
        allowed(store, check);

        assertThat(fallbacks).containsExactly("local/timeout", "local/not-connected", "local/error", "local/max-wait",
                "local/breaker-open");
        RecentFallbacks.Window minute = store.lastMinute();
        assertThat(minute.decisions()).isEqualTo(5);
        assertThat(minute.fallbacks()).isEqualTo(5);
        assertThat(minute.lastReason()).isEqualTo(FallbackReason.BREAKER_OPEN);
    }

    @Test
    void callsThatTimeOutInOneStallCountOnceAndAShortStallLeavesTheBreakerClosed() {
        List<Sinks.One<Verdict>> inFlight = new ArrayList<>();
        FailSafeStore store = failSafe(checks -> {
            Sinks.One<Verdict> sink = Sinks.one();
            inFlight.add(sink);
            return sink.asMono();
        }, 1);
        List<Verdict> decided = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 15; i++) {
            store.evaluate(List.of(check)).subscribe(decided::add);
        }
        clock.addAndGet(Duration.ofMillis(6).toNanos());
        // One silence of the store: every call in flight during it times out at once.
        inFlight.forEach(sink -> sink.tryEmitError(new StoreTimeoutException("silent")));

        assertThat(decided).hasSize(15).allSatisfy(v -> assertThat(v.source()).isEqualTo(Verdict.Source.FALLBACK));
        assertThat(breaker.state()).as("15 calls failed together: one stall, counted once").isEqualTo(
                StoreBreaker.State.CLOSED);

        // The same 15 failures as errors (a refused connection fails each call on its own) do open it.
        inFlight.clear();
        for (int i = 0; i < 15; i++) {
            store.evaluate(List.of(check)).subscribe(decided::add);
        }
        inFlight.forEach(sink -> sink.tryEmitError(new IllegalStateException("connection reset")));
        assertThat(breaker.state()).isEqualTo(StoreBreaker.State.OPEN);
    }

    @Test
    void aStoreThatStaysSilentStillOpensTheBreakerAfterTheMinimumNumberOfTimeouts() {
        FailSafeStore store = failSafe(checks -> Mono.defer(() -> {
            clock.addAndGet(Duration.ofMillis(6).toNanos());
            return Mono.error(new StoreTimeoutException("silent"));
        }), 1);
        int calls = 0;
        while (breaker.state() == StoreBreaker.State.CLOSED && calls < 100) {
            allowed(store, check);
            calls++;
        }
        assertThat(breaker.state()).isEqualTo(StoreBreaker.State.OPEN);
        assertThat(calls).as("the default breaker opens at 10 failed calls of 10").isEqualTo(10);
    }

    @Test
    void theFallbackContinuesFromTheStoresLastAnswerInsteadOfAFreshBucket() {
        AtomicReference<Mono<Verdict>> answer = new AtomicReference<>(Mono.just(reported(check, 2)));
        FailSafeStore store = failSafe(checks -> answer.get(), 1);
        assertThat(allowed(store, check)).isTrue();

        answer.set(Mono.error(new StoreTimeoutException("silent")));
        List<Boolean> withoutStore = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            withoutStore.add(allowed(store, check));
        }
        assertThat(withoutStore).as("2 tokens left, as the store said: no fresh bucket of 10")
                .containsExactly(true, true, false, false, false);
    }

    @Test
    void whatTheFallbackAdmittedIsChargedToTheStoreWhenItAnswersAgain() {
        AtomicReference<Mono<Verdict>> answer = new AtomicReference<>(Mono.just(reported(check, 7)));
        FailSafeStore store = failSafe(checks -> answer.get(), 1);
        allowed(store, check);

        answer.set(Mono.error(new StoreTimeoutException("silent")));
        for (int i = 0; i < 3; i++) {
            assertThat(allowed(store, check)).isTrue();
        }
        assertThat(charged).as("nothing is charged while the store does not answer").isEmpty();

        answer.set(Mono.just(reported(check, 3)));
        allowed(store, check);
        awaitCharges(1);
        assertThat(charged).singleElement().satisfies(charge -> {
            assertThat(charge.check().rule()).as("charged against the rule, not the instance's share").isSameAs(rule);
            assertThat(charge.tokens()).isEqualTo(3.0);
        });

        allowed(store, check);
        assertThat(charged).as("charged once").hasSize(1);
    }

    @Test
    void chargesThatWereNotSentAreSentWhenTheStoreAnswersAgainAndOnesThatMayHaveAppliedAreNot() {
        AtomicReference<Mono<Verdict>> answer = new AtomicReference<>(Mono.just(reported(check, 9)));
        FailSafeStore store = failSafe(checks -> answer.get(), 1);
        allowed(store, check);
        answer.set(Mono.error(new StoreTimeoutException("silent")));
        allowed(store, check);
        allowed(store, check);

        AtomicReference<String> chargeOutcome = new AtomicReference<>("not sent");
        chargeAnswer.set(batch -> {
            Mono<Void> outcome = chargeOutcome.get().equals("not sent")
                    ? Mono.error(new FallbackCharges.NotSentException("not connected", null))
                    : Mono.error(new IllegalStateException("no answer in time"));
            chargeOutcome.set("unknown");
            return outcome;
        });
        answer.set(Mono.just(reported(check, 8)));
        // each answer of the store is a chance to charge; a charge still in flight waits for the next one
        awaitCharges(2, () -> allowed(store, check));
        assertThat(charged).extracting(FallbackCharges.Charge::tokens).containsExactly(2.0, 2.0);

        for (int i = 0; i < 20; i++) {
            allowed(store, check);
            sleepMillis(5);
        }
        assertThat(charged).as("a charge that may have applied is not sent again").hasSize(2);
    }

    @Test
    void anInstanceOfSeveralContinuesFromItsShareOfWhatTheStoreSaidIsLeft() {
        // 4 instances, share factor 1: each holds a quarter. The store says 8 are left: this instance may admit 2.
        AtomicReference<Mono<Verdict>> answer = new AtomicReference<>(Mono.just(reported(check, 8)));
        FailSafeStore store = failSafe(checks -> answer.get(), 4);
        allowed(store, check);
        answer.set(Mono.error(new StoreNotConnectedException("down")));
        int admitted = 0;
        for (int i = 0; i < 10; i++) {
            admitted += allowed(store, check) ? 1 : 0;
        }
        assertThat(admitted).isEqualTo(2);
    }

    private void awaitCharges(int count) {
        awaitCharges(count, () -> {
        });
    }

    /** Waits (at most 5 s) for {@code count} charges, running {@code between} between looks. */
    private void awaitCharges(int count, Runnable between) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (charged.size() < count && System.nanoTime() < deadline) {
            between.run();
            sleepMillis(2);
        }
        assertThat(charged).hasSizeGreaterThanOrEqualTo(count);
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}

package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

class FailSafeStoreTest {

    private final StoreBreaker breaker = new StoreBreaker("test",
            new StoreBreaker.Settings(4, 4, 50, Duration.ofSeconds(3), 3));
    private final LocalBucketStore local = new LocalBucketStore(100);
    private final AtomicInteger calls = new AtomicInteger();

    private Rule rule(String id, long capacity, FailureMode mode) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of(id + ".", capacity, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, mode);
    }

    private FailSafeStore store(RateLimitStore inner, int instances) {
        return store(inner, instances, WithoutStore.DEFAULT_SHARE_FACTOR);
    }

    private FailSafeStore store(RateLimitStore inner, int instances, double shareFactor) {
        return new FailSafeStore(checks -> {
            calls.incrementAndGet();
            return inner.evaluate(checks);
        }, new WithoutStore(local, () -> instances, StoreMetrics.NONE, WithoutStore.untilBreakerRetries(breaker),
                shareFactor), Duration.ofMillis(20), breaker, StoreMetrics.NONE, System::nanoTime);
    }

    @Test
    void aStoreThatNeverAnswersIsAbandonedAtTheTimeoutAndTheDecisionIsLocal() {
        FailSafeStore store = store(c -> Mono.never(), 1);
        StepVerifier.create(store.evaluate(List.of(Fixtures.check(rule("r", 2, FailureMode.LOCAL), "k"))))
                .assertNext(verdict -> {
                    assertThat(verdict.allowed()).isTrue();
                    assertThat(verdict.source()).isEqualTo(Verdict.Source.FALLBACK);
                    assertThat(verdict.fallbackReason()).isEqualTo(FallbackReason.MAX_WAIT);
                })
                .expectComplete()
                .verify(Duration.ofSeconds(2));
        assertThat(store.fallbackDecisions()).isEqualTo(1);
    }

    @Test
    void theBreakerOpensAfterFailuresAndThenTheStoreIsNotAskedAtAll() {
        FailSafeStore store = store(c -> Mono.error(new IllegalStateException("connection refused")), 1);
        Check check = Fixtures.check(rule("r", 100, FailureMode.LOCAL), "k");
        List<FallbackReason> reasons = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) {
            reasons.add(store.evaluate(List.of(check)).block(Duration.ofSeconds(1)).fallbackReason());
        }
        assertThat(breaker.state()).isEqualTo(StoreBreaker.State.OPEN);
        assertThat(calls.get()).as("four failures open it; later requests never reach the store").isEqualTo(4);
        assertThat(reasons).as("each fallback verdict says why").startsWith(FallbackReason.ERROR, FallbackReason.ERROR,
                FallbackReason.ERROR, FallbackReason.ERROR).endsWith(FallbackReason.BREAKER_OPEN);
    }

    @Test
    void localFallbackHoldsItsShareOfTheLimitByDefault() {
        // Limit 10 over 5 live instances: each instance's fallback bucket holds 10 / 5 = 2.
        FailSafeStore store = store(c -> Mono.error(new IllegalStateException("down")), 5);
        Check check = Fixtures.check(rule("r", 10, FailureMode.LOCAL), "k");
        int allowed = 0;
        for (int i = 0; i < 10; i++) {
            allowed += store.evaluate(List.of(check)).block(Duration.ofSeconds(1)).allowed() ? 1 : 0;
        }
        assertThat(allowed).isEqualTo(2);
    }

    @Test
    void localFallbackHoldsTheShareTimesTheShareFactor() {
        // Limit 10 over 5 live instances, factor 2: each instance's fallback bucket holds 10 / 5 x 2 = 4.
        FailSafeStore store = store(c -> Mono.error(new IllegalStateException("down")), 5, 2.0);
        Check check = Fixtures.check(rule("r", 10, FailureMode.LOCAL), "k");
        int allowed = 0;
        for (int i = 0; i < 10; i++) {
            allowed += store.evaluate(List.of(check)).block(Duration.ofSeconds(1)).allowed() ? 1 : 0;
        }
        assertThat(allowed).isEqualTo(4);
    }

    @Test
    void aLoneInstanceNeverGetsMoreThanTheLimitItself() {
        FailSafeStore store = store(c -> Mono.error(new IllegalStateException("down")), 1);
        Check check = Fixtures.check(rule("r", 10, FailureMode.LOCAL), "k");
        int allowed = 0;
        for (int i = 0; i < 30; i++) {
            allowed += store.evaluate(List.of(check)).block(Duration.ofSeconds(1)).allowed() ? 1 : 0;
        }
        assertThat(allowed).isEqualTo(10);
    }

    @Test
    void openRulesAllowAndClosedRulesRefuseWithAnUnavailableVerdict() {
        FailSafeStore store = store(c -> Mono.error(new IllegalStateException("down")), 1);
        Verdict open = store.evaluate(List.of(Fixtures.check(rule("o", 1, FailureMode.OPEN), "k"),
                Fixtures.check(rule("l", 5, FailureMode.LOCAL), "k"))).block(Duration.ofSeconds(1));
        assertThat(open.allowed()).isTrue();
        Verdict closed = store.evaluate(List.of(Fixtures.check(rule("c", 5, FailureMode.CLOSED), "k"),
                Fixtures.check(rule("l", 5, FailureMode.LOCAL), "k"))).block(Duration.ofSeconds(1));
        assertThat(closed.allowed()).isFalse();
        assertThat(closed.reason()).isEqualTo(Verdict.Reason.STORE_UNAVAILABLE);
        assertThat(closed.fallbackReason()).isEqualTo(FallbackReason.ERROR);
        assertThat(closed.limiting()).hasValueSatisfying(o -> {
            assertThat(o.rule().id()).isEqualTo("c");
            assertThat(o.retryAfter()).isEqualTo(Duration.ofSeconds(3));
        });
        Verdict local = store.evaluate(List.of(Fixtures.check(rule("l", 5, FailureMode.LOCAL), "k")))
                .block(Duration.ofSeconds(1));
        assertThat(local.outcomes().get(0).remaining()).as("the refused request spent nothing locally").isEqualTo(3);
    }

    @Test
    void aHealthyStoreDecides() {
        Verdict remote = Verdict.evaluated(List.of(), Verdict.Source.STORE);
        FailSafeStore store = store(c -> Mono.just(remote), 1);
        assertThat(store.evaluate(List.of(Fixtures.check(rule("r", 2, FailureMode.LOCAL), "k")))
                .block(Duration.ofSeconds(1))).isSameAs(remote);
        assertThat(store.fallbackDecisions()).isZero();
    }
}

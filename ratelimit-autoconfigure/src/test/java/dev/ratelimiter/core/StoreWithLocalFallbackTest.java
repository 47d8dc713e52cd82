package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

class StoreWithLocalFallbackTest {

    private final Rule rule = Fixtures.tokenBucket("free.default", 2, 1, Duration.ofHours(1));
    private final List<Check> checks = List.of(Fixtures.check(rule, "k"));
    private final LocalBucketStore local = new LocalBucketStore(100);

    @Test
    void aStoreThatNeverAnswersIsAbandonedAtTheTimeoutAndTheDecisionIsLocal() {
        StoreWithLocalFallback store = new StoreWithLocalFallback(c -> Mono.never(), local, Duration.ofMillis(20));
        StepVerifier.create(store.evaluate(checks))
                .assertNext(verdict -> {
                    assertThat(verdict.allowed()).isTrue();
                    assertThat(verdict.source()).isEqualTo(Verdict.Source.LOCAL);
                })
                .expectComplete()
                .verify(Duration.ofSeconds(2));
        assertThat(store.fallbackDecisions()).isEqualTo(1);
    }

    @Test
    void aFailingStoreStillLimitsLocally() {
        StoreWithLocalFallback store = new StoreWithLocalFallback(
                c -> Mono.error(new IllegalStateException("connection refused")), local, Duration.ofMillis(20));
        assertThat(store.evaluate(checks).block(Duration.ofSeconds(1)).allowed()).isTrue();
        assertThat(store.evaluate(checks).block(Duration.ofSeconds(1)).allowed()).isTrue();
        assertThat(store.evaluate(checks).block(Duration.ofSeconds(1)).allowed()).isFalse();
    }

    @Test
    void aHealthyStoreDecides() {
        Verdict remote = Verdict.evaluated(List.of(), Verdict.Source.STORE);
        StoreWithLocalFallback store = new StoreWithLocalFallback(c -> Mono.just(remote), local, Duration.ofMillis(100));
        assertThat(store.evaluate(checks).block(Duration.ofSeconds(1))).isSameAs(remote);
        assertThat(store.fallbackDecisions()).isZero();
    }
}

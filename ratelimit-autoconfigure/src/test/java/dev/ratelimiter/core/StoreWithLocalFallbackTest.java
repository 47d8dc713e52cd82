package dev.ratelimiter.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

class StoreWithLocalFallbackTest {

    private final TokenBucketLimit limit = TokenBucketLimit.builder("free.default").capacity(2)
            .refill(1, Duration.ofHours(1)).build();
    private final BucketKey key = new BucketKey(ClientIds.of("k"), "free.default");
    private final LocalTokenBucketStore local = new LocalTokenBucketStore(100);

    @Test
    void aStoreThatNeverAnswersIsAbandonedAtTheTimeoutAndTheDecisionIsLocal() {
        StoreWithLocalFallback store = new StoreWithLocalFallback((k, l, c) -> Mono.never(), local,
                Duration.ofMillis(20));
        StepVerifier.create(store.tryConsume(key, limit, 1))
                .assertNext(decision -> {
                    assertThat(decision.allowed()).isTrue();
                    assertThat(decision.source()).isEqualTo(Decision.Source.LOCAL);
                })
                .expectComplete()
                .verify(Duration.ofSeconds(2));
        assertThat(store.fallbackDecisions()).isEqualTo(1);
    }

    @Test
    void aFailingStoreStillLimitsLocally() {
        StoreWithLocalFallback store = new StoreWithLocalFallback(
                (k, l, c) -> Mono.error(new IllegalStateException("connection refused")), local, Duration.ofMillis(20));
        assertThat(store.tryConsume(key, limit, 1).block(Duration.ofSeconds(1)).allowed()).isTrue();
        assertThat(store.tryConsume(key, limit, 1).block(Duration.ofSeconds(1)).allowed()).isTrue();
        assertThat(store.tryConsume(key, limit, 1).block(Duration.ofSeconds(1)).allowed()).isFalse();
    }

    @Test
    void aHealthyStoreDecides() {
        Decision remote = new Decision(true, limit, 1, Duration.ZERO, Duration.ZERO, Decision.Source.STORE);
        StoreWithLocalFallback store = new StoreWithLocalFallback((k, l, c) -> Mono.just(remote), local,
                Duration.ofMillis(100));
        assertThat(store.tryConsume(key, limit, 1).block(Duration.ofSeconds(1))).isSameAs(remote);
        assertThat(store.fallbackDecisions()).isZero();
    }
}

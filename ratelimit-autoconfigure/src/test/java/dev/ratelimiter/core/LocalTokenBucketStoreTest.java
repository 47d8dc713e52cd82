package dev.ratelimiter.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LocalTokenBucketStoreTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final LocalTokenBucketStore store = new LocalTokenBucketStore(1_000, clock::get);
    private final TokenBucketLimit limit = TokenBucketLimit.builder("free.default")
            .capacity(10)
            .refill(5, Duration.ofSeconds(1))
            .build();
    private final BucketKey key = new BucketKey(ClientIds.of("demo"), "free.default");

    @Test
    void fullBucketAdmitsItsBurstThenRefuses() {
        for (int i = 0; i < 10; i++) {
            Decision decision = store.consume(key, limit, 1);
            assertThat(decision.allowed()).isTrue();
            assertThat(decision.remaining()).isEqualTo(9 - i);
        }
        Decision denied = store.consume(key, limit, 1);
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.remaining()).isZero();
        assertThat(denied.retryAfter()).isEqualTo(Duration.ofMillis(200));
        assertThat(denied.resetAfter()).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void refillsContinuouslyNotInWholeSeconds() {
        drain();
        advance(Duration.ofMillis(199));
        assertThat(store.consume(key, limit, 1).allowed()).isFalse();
        advance(Duration.ofMillis(1));
        Decision decision = store.consume(key, limit, 1);
        assertThat(decision.allowed()).isTrue();
        assertThat(decision.remaining()).isZero();
        advance(Duration.ofMillis(600));
        assertThat(store.consume(key, limit, 1).remaining()).isEqualTo(2);
    }

    @Test
    void costTakesSeveralTokensAndRetryAfterCoversTheShortfall() {
        Decision decision = store.consume(key, limit, 3);
        assertThat(decision.allowed()).isTrue();
        assertThat(decision.remaining()).isEqualTo(7);
        assertThat(decision.resetAfter()).isEqualTo(Duration.ofMillis(600));
        store.consume(key, limit, 6);
        Decision denied = store.consume(key, limit, 3);
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.remaining()).isEqualTo(1);
        assertThat(denied.retryAfter()).isEqualTo(Duration.ofMillis(400));
    }

    @Test
    void deniedRequestsSpendNothing() {
        drain();
        for (int i = 0; i < 50; i++) {
            store.consume(key, limit, 1);
        }
        advance(Duration.ofMillis(400));
        assertThat(store.consume(key, limit, 1).remaining()).as("two tokens refilled, one spent").isEqualTo(1);
    }

    @Test
    void bucketsAreSeparatePerClientAndPolicy() {
        drain();
        assertThat(store.consume(new BucketKey(ClientIds.of("other"), "free.default"), limit, 1).allowed()).isTrue();
        assertThat(store.consume(new BucketKey(key.client(), "free.reports"), limit, 1).allowed()).isTrue();
    }

    @Test
    void idleBucketsAreForgottenOnceTheyWouldBeFull() {
        drain();
        assertThat(store.size()).isEqualTo(1);
        advance(Duration.ofMillis(2_001));
        assertThat(store.size()).isZero();
        assertThat(store.consume(key, limit, 1).remaining()).as("a forgotten bucket is full, as it would be").isEqualTo(9);
    }

    @Test
    void holdsNoMoreThanMaxKeys() {
        LocalTokenBucketStore small = new LocalTokenBucketStore(100, clock::get);
        for (int i = 0; i < 1_000; i++) {
            small.consume(new BucketKey(ClientIds.of("client-" + i), "free.default"), limit, 1);
        }
        assertThat(small.size()).isLessThanOrEqualTo(100);
    }

    private void drain() {
        for (int i = 0; i < 10; i++) {
            store.consume(key, limit, 1);
        }
    }

    private void advance(Duration duration) {
        clock.addAndGet(duration.toNanos());
    }
}

package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The store's circuit breaker: resilience4j's count-based semantics, on atomics only. */
class StoreBreakerTest {

    private final AtomicLong nanos = new AtomicLong();
    private final StoreBreaker breaker = new StoreBreaker("test",
            new StoreBreaker.Settings(10, 4, 50, Duration.ofSeconds(1), 3), nanos::get);

    @Test
    void opensAtTheFailureRateOnceEnoughCallsAreSeen() {
        breaker.onError();
        breaker.onError();
        breaker.onError();
        assertThat(breaker.state()).as("3 failures of 3: fewer calls than the minimum of 4")
                .isEqualTo(StoreBreaker.State.CLOSED);
        breaker.onSuccess();
        assertThat(breaker.state()).as("3 failures of 4").isEqualTo(StoreBreaker.State.OPEN);
        assertThat(breaker.tryAcquirePermission()).isFalse();
    }

    @Test
    void staysClosedBelowTheRateAndForgetsOutcomesOutsideItsWindow() {
        for (int i = 0; i < 40; i++) {
            if (i % 3 == 2) {
                breaker.onError();
            }
            else {
                breaker.onSuccess();
            }
        }
        assertThat(breaker.state()).as("a third failing").isEqualTo(StoreBreaker.State.CLOSED);
        for (int i = 0; i < 10; i++) {
            breaker.onSuccess();
        }
        for (int i = 0; i < 4; i++) {
            breaker.onError();
        }
        assertThat(breaker.state()).as("4 of the last 10").isEqualTo(StoreBreaker.State.CLOSED);
        breaker.onError();
        assertThat(breaker.state()).as("5 of the last 10").isEqualTo(StoreBreaker.State.OPEN);
    }

    @Test
    void afterItsWaitItLetsTrialCallsThroughAndClosesOrReopensByTheirOutcome() {
        open();
        nanos.addAndGet(Duration.ofMillis(999).toNanos());
        assertThat(breaker.tryAcquirePermission()).isFalse();
        nanos.addAndGet(Duration.ofMillis(1).toNanos());
        assertThat(trials()).as("three trial calls").isEqualTo(3);
        assertThat(breaker.state()).isEqualTo(StoreBreaker.State.HALF_OPEN);
        breaker.onSuccess();
        breaker.onError();
        breaker.onError();
        assertThat(breaker.state()).as("2 of 3 trials failed").isEqualTo(StoreBreaker.State.OPEN);

        nanos.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(trials()).isEqualTo(3);
        breaker.onSuccess();
        breaker.onError();
        breaker.onSuccess();
        assertThat(breaker.state()).as("1 of 3 failed").isEqualTo(StoreBreaker.State.CLOSED);
        assertThat(breaker.tryAcquirePermission()).isTrue();
    }

    @Test
    void aTrialCancelledBeforeItsOutcomeGivesItsPlaceBack() {
        open();
        nanos.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(trials()).isEqualTo(3);
        breaker.releasePermission();
        assertThat(breaker.tryAcquirePermission()).isTrue();
        assertThat(breaker.tryAcquirePermission()).isFalse();
    }

    @Test
    void manyThreadsRecordingAtOnceLeaveItInAConsistentState() throws InterruptedException {
        StoreBreaker shared = new StoreBreaker("shared", new StoreBreaker.Settings(20, 10, 50, Duration.ofMillis(1),
                3));
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            threads.add(new Thread(() -> {
                for (int i = 0; i < 50_000; i++) {
                    if (shared.tryAcquirePermission()) {
                        int roll = ThreadLocalRandom.current().nextInt(10);
                        if (roll == 0) {
                            shared.releasePermission();
                        }
                        else if (roll < 5) {
                            shared.onError();
                        }
                        else {
                            shared.onSuccess();
                        }
                    }
                }
            }));
        }
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join(30_000);
        }
        // Whatever it went through, healthy calls bring it back.
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (shared.state() != StoreBreaker.State.CLOSED && System.nanoTime() < deadline) {
            if (shared.tryAcquirePermission()) {
                shared.onSuccess();
            }
        }
        assertThat(shared.state()).isEqualTo(StoreBreaker.State.CLOSED);
    }

    private void open() {
        for (int i = 0; i < 4; i++) {
            breaker.onError();
        }
        assertThat(breaker.state()).isEqualTo(StoreBreaker.State.OPEN);
    }

    private int trials() {
        int permitted = 0;
        for (int i = 0; i < 10; i++) {
            permitted += breaker.tryAcquirePermission() ? 1 : 0;
        }
        return permitted;
    }
}

package dev.ratelimiter.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class PeriodicTaskTest {

    @Test
    void aFailingRunDoesNotEndTheLoop() {
        AtomicInteger runs = new AtomicInteger();
        PeriodicTask task = new PeriodicTask("failing", Duration.ZERO, Duration.ofMillis(10), () -> {
            runs.incrementAndGet();
            return Mono.error(new IllegalStateException("store away"));
        });
        task.start();
        try {
            awaitRuns(runs, 5);
        }
        finally {
            task.stop();
        }
        assertThat(runs.get()).isGreaterThanOrEqualTo(5);
    }

    @Test
    void aRunThatThrowsWhileAssembledDoesNotEndTheLoopEither() {
        AtomicInteger runs = new AtomicInteger();
        PeriodicTask task = new PeriodicTask("throwing", Duration.ZERO, Duration.ofMillis(10), () -> {
            runs.incrementAndGet();
            throw new IllegalStateException("client closed");
        });
        task.start();
        try {
            awaitRuns(runs, 5);
        }
        finally {
            task.stop();
        }
        assertThat(runs.get()).isGreaterThanOrEqualTo(5);
    }

    @Test
    void aSlowRunSkipsTheTicksItOverlapsAndNeverRunsTwiceAtOnce() throws InterruptedException {
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger inProgress = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        Sinks.Empty<Void> firstRunEnds = Sinks.empty();
        PeriodicTask task = new PeriodicTask("slow", Duration.ZERO, Duration.ofMillis(5), () -> {
            int n = runs.incrementAndGet();
            mostAtOnce.accumulateAndGet(inProgress.incrementAndGet(), Math::max);
            Mono<Void> run = n == 1 ? firstRunEnds.asMono() : Mono.empty();
            return run.doOnTerminate(inProgress::decrementAndGet);
        });
        task.start();
        try {
            // 100 periods pass while the first run hangs: none of them starts a run of its own
            Thread.sleep(500);
            assertThat(runs.get()).isEqualTo(1);
            firstRunEnds.tryEmitEmpty();
            awaitRuns(runs, 10);
        }
        finally {
            task.stop();
        }
        assertThat(mostAtOnce.get()).isEqualTo(1);
    }

    @Test
    void aStoppedTaskRunsNoMoreAndCanBeStartedAgain() throws InterruptedException {
        AtomicInteger runs = new AtomicInteger();
        PeriodicTask task = PeriodicTask.every("restartable", Duration.ofMillis(10), () -> {
            runs.incrementAndGet();
            return Mono.empty();
        });
        assertThat(task.isRunning()).isFalse();
        task.start();
        task.start(); // a second start does not start a second loop
        awaitRuns(runs, 3);
        task.stop();
        task.stop();
        assertThat(task.isRunning()).isFalse();
        int stoppedAt = runs.get();
        Thread.sleep(100);
        assertThat(runs.get()).as("no run after the stop").isEqualTo(stoppedAt);
        task.start();
        try {
            awaitRuns(runs, stoppedAt + 3);
        }
        finally {
            task.stop();
        }
        assertThat(task.isRunning()).isFalse();
    }

    @Test
    void aPeriodMustBePositive() {
        assertThatIllegalArgumentException().isThrownBy(() -> PeriodicTask.every("never", Duration.ZERO, Mono::empty))
                .withMessageContaining("never");
    }

    private static void awaitRuns(AtomicInteger runs, int atLeast) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (runs.get() < atLeast && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            Thread.yield();
        }
        assertThat(runs.get()).isGreaterThanOrEqualTo(atLeast);
    }
}

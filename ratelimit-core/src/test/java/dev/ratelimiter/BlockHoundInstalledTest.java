package dev.ratelimiter;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** BlockHound is on in this suite: a blocking call on a Reactor worker is caught (and would fail the suite). */
class BlockHoundInstalledTest {

    @Test
    void sleepingOnAParallelWorkerIsCaught() {
        assertThatThrownBy(() -> Mono.fromCallable(() -> {
            Thread.sleep(1);
            return 1;
        }).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(5)))
                .hasCauseInstanceOf(BlockingOperationError.class);
        // Recorded too: take it back, this test made it on purpose.
        BlockingCalls.forget();
    }
}

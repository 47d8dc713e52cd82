package dev.ratelimiter.mvc;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimiter.core.Verdict;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The backstop above the store timeout: a decision that never comes, or fails, is replaced by the rules' failure
 * modes (here a stand-in verdict), never by "let it through" whatever the rules promised.
 */
class DecisionWaitTest {

    private static final Verdict REFUSED = Verdict.unavailable(List.of());
    private final DecisionWait wait = new DecisionWait(Duration.ofMillis(50));

    @Test
    void aDecisionThatNeverComesIsCancelledAndReplacedByTheUndecidedVerdict() {
        AtomicBoolean cancelled = new AtomicBoolean();
        Verdict verdict = wait.await(Mono.<Verdict>never().doOnCancel(() -> cancelled.set(true)), () -> REFUSED);
        assertThat(verdict).isSameAs(REFUSED);
        assertThat(cancelled).as("the late decision is unsubscribed, so it gives back what it takes").isTrue();
    }

    @Test
    void aFailedDecisionIsReplacedByTheUndecidedVerdict() {
        Verdict verdict = wait.await(Mono.error(new IllegalStateException("boom")), () -> REFUSED);
        assertThat(verdict).isSameAs(REFUSED);
    }

    @Test
    void aDecisionInTimeIsTakenAsItIsAndAnEmptyOneIsNoRule() {
        Verdict allowed = Verdict.unlimited(Verdict.Reason.KILL_SWITCH);
        assertThat(wait.await(Mono.just(allowed), () -> REFUSED)).isSameAs(allowed);
        assertThat(wait.await(Mono.empty(), () -> REFUSED).reason()).isEqualTo(Verdict.Reason.NO_RULE);
    }

    @Test
    void anInterruptedWaitKeepsTheInterruptAndStillAnswers() {
        Thread.currentThread().interrupt();
        try {
            assertThat(wait.await(Mono.never(), () -> REFUSED)).isSameAs(REFUSED);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        }
        finally {
            Thread.interrupted();
        }
    }
}

package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fallback decision that races a store answer on another thread is still charged: what the fallback spent is on
 * record before the store's answers are told there is something to charge. Found by the attack review of issue 30,
 * when the answer could drain the record between the spend and its entry, leaving the spend uncharged until the next
 * fallback decision, however long that took.
 */
class FallbackOwingRaceTest {

    private final Rule rule = new Rule("r", "r", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("r.", 10, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
    private final Check hot = Fixtures.check(rule, "hot");
    private final Check other = Fixtures.check(rule, "other");

    private static Verdict reported(Check check, long remaining) {
        return Verdict.evaluated(List.of(new RuleOutcome(check, true, remaining, Duration.ZERO, Duration.ZERO)),
                Verdict.Source.STORE);
    }

    @Test
    void aFallbackSpendThatRacesAStoreAnswerIsStillCharged() throws Exception {
        CountDownLatch inFallback = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Thread> holdOn = new AtomicReference<>();
        StoreMetrics metrics = new StoreMetrics() {
            @Override
            public void fallbackDecision(FailureMode mode, FallbackReason reason) {
                // Between the fallback's spend and its entry in spentAlone: another thread's answer lands now.
                if (Thread.currentThread() == holdOn.get()) {
                    inFallback.countDown();
                    try {
                        release.await(5, TimeUnit.SECONDS);
                    }
                    catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        };
        List<FallbackCharges.Charge> charged = new CopyOnWriteArrayList<>();
        FallbackCharges charges = batch -> Mono.fromRunnable(() -> charged.addAll(batch));
        StoreBreaker breaker = new StoreBreaker("race", StoreBreaker.Settings.DEFAULTS);
        WithoutStore withoutStore = new WithoutStore(new LocalBucketStore(100), () -> 1, metrics,
                WithoutStore.untilBreakerRetries(breaker), 1.0);
        AtomicReference<Boolean> storeDown = new AtomicReference<>(false);
        FailSafeStore store = new FailSafeStore(checks -> storeDown.get() && checks.get(0) == hot
                ? Mono.error(new StoreTimeoutException("silent"))
                : Mono.just(reported(checks.get(0), checks.get(0) == hot ? 5 : 9)),
                withoutStore, Duration.ofSeconds(1), breaker, metrics, charges, System::nanoTime);

        // The store has answered for the hot key once: the fallback follows it (5 left).
        assertThat(store.evaluate(List.of(hot)).block().source()).isEqualTo(Verdict.Source.STORE);

        // The hot key's call times out: decided by the fallback, on a thread of its own.
        storeDown.set(true);
        CompletableFuture<Verdict> fallback = new CompletableFuture<>();
        Thread decider = new Thread(() -> fallback.complete(store.evaluate(List.of(hot)).block()));
        holdOn.set(decider);
        decider.start();
        assertThat(inFallback.await(5, TimeUnit.SECONDS)).isTrue();

        // Meanwhile another request's answer arrives: it clears 'owing' and drains (nothing recorded yet).
        assertThat(store.evaluate(List.of(other)).block().source()).isEqualTo(Verdict.Source.STORE);
        Thread.sleep(200); // the drain runs on the background thread
        release.countDown();
        assertThat(fallback.get(5, TimeUnit.SECONDS).source()).isEqualTo(Verdict.Source.FALLBACK);
        assertThat(fallback.get().allowed()).isTrue();

        // The store is healthy from here on: every later answer is a chance to charge the one admission.
        storeDown.set(false);
        for (int i = 0; i < 50; i++) {
            store.evaluate(List.of(hot)).block();
            store.evaluate(List.of(other)).block();
            Thread.sleep(10);
        }
        assertThat(charged).as("the request the fallback admitted for the hot key is charged once the store answers")
                .extracting(charge -> charge.check().bucket()).contains(hot.bucket());
    }
}

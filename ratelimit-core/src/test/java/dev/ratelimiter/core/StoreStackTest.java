package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.context.Context;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class StoreStackTest {

    private final AtomicInteger sharedCalls = new AtomicInteger();
    private final RateLimitStore shared = checks -> {
        sharedCalls.incrementAndGet();
        return Mono.just(Verdict.evaluated(List.of(), Verdict.Source.STORE));
    };
    private final SettleClient settleClient = reports -> Mono.never();
    private final Check exactCheck = Fixtures.check(Fixtures.tokenBucket("exact", 10, 10, Duration.ofSeconds(1)),
            "k");

    private StoreStack.Builder complete() {
        return StoreStack.builder().sharedStore(shared).settleClient(settleClient);
    }

    @Test
    void aStackWithoutTheSharedStoreIsRefusedSayingWhatIsMissing() {
        assertThatIllegalStateException().isThrownBy(() -> StoreStack.builder().settleClient(settleClient).build())
                .withMessage("The rate-limit store stack needs the shared store (exact decisions are asked there): "
                        + "call sharedStore(...)");
    }

    @Test
    void aStackWithoutASettleClientIsRefusedSayingWhatIsMissing() {
        assertThatIllegalStateException().isThrownBy(() -> StoreStack.builder().sharedStore(shared).build())
                .withMessage("The rate-limit store stack needs a settle client (local-mode shares are settled "
                        + "through it): call settleClient(...)");
    }

    @Test
    void settingsThatCannotWorkAreRefusedWithTheValueGiven() {
        assertThatIllegalStateException().isThrownBy(() -> complete().timeout(Duration.ZERO).build())
                .withMessage("The rate-limit store stack needs a positive store timeout, but it was PT0S");
        assertThatIllegalStateException().isThrownBy(() -> complete().settleInterval(Duration.ofMillis(-1)).build())
                .withMessage("The rate-limit store stack needs a positive settle interval, but it was PT-0.001S");
        assertThatIllegalStateException().isThrownBy(() -> complete().settleMaxSilence(Duration.ofSeconds(-1)).build())
                .withMessage("The rate-limit store stack needs a settle silence of zero or more, but it was PT-1S");
        assertThatIllegalStateException().isThrownBy(() -> complete().localMaxKeys(0).build())
                .withMessageContaining("localMaxKeys was 0");
        assertThatIllegalStateException().isThrownBy(() -> complete().liveInstances(null).build())
                .withMessageContaining("liveInstances(...)");
        assertThatIllegalStateException().isThrownBy(() -> complete().memoryUntilShared(() -> true, " ").build())
                .withMessageContaining("a name for the shared store");
    }

    @Test
    void defaultsAreNamedAndUsed() {
        StoreStack stack = complete().build();
        assertThat(StoreStack.DEFAULT_TIMEOUT).isEqualTo(Duration.ofMillis(5));
        assertThat(stack.settleInterval()).isEqualTo(StoreStack.DEFAULT_SETTLE_INTERVAL)
                .isEqualTo(Duration.ofMillis(100));
        assertThat(stack.failSafe().breaker().name()).isEqualTo(StoreStack.DEFAULT_BREAKER_NAME);
        assertThat(stack.failSafe().breaker().settings()).isEqualTo(StoreBreaker.Settings.DEFAULTS);
        assertThat(stack.denialCache()).as("denials are remembered unless switched off").isPresent();
        assertThat(stack.memoryUntilShared()).as("memory-until-shared only when asked for").isEmpty();
    }

    @Test
    void theDefaultTimeoutAbandonsASilentStoreAfterFiveMillisecondsOnTheTimerGivenInTheContext() {
        StoreStack stack = StoreStack.builder().sharedStore(checks -> Mono.never()).settleClient(settleClient)
                .build();
        VirtualTimeScheduler timer = VirtualTimeScheduler.create();
        AtomicReference<Verdict> verdict = new AtomicReference<>();
        stack.store().evaluate(List.of(exactCheck))
                .contextWrite(Context.of(RateLimitStore.TIMER_SCHEDULER, timer))
                .subscribe(verdict::set);
        timer.advanceTimeBy(Duration.ofMillis(4));
        assertThat(verdict.get()).as("still waiting at 4 ms").isNull();
        timer.advanceTimeBy(Duration.ofMillis(1));
        assertThat(verdict.get()).isNotNull();
        assertThat(verdict.get().source()).isEqualTo(Verdict.Source.FALLBACK);
        assertThat(stack.failSafe().fallbackDecisions()).isEqualTo(1);
    }

    @Test
    void thePartsReturnedAreTheOnesInTheChain() {
        StoreBreaker breaker = new StoreBreaker("mine", StoreBreaker.Settings.DEFAULTS);
        StoreStack stack = complete().breaker(breaker).build();
        RateLimitStore store = stack.store();
        assertThat(store).isInstanceOf(ModeRoutingStore.class);
        assertThat(store.find(FailSafeStore.class)).containsSame(stack.failSafe());
        assertThat(store.find(DenialCache.class)).containsSame(stack.denialCache().orElseThrow());
        assertThat(store.find(LeaseStore.class)).containsSame(stack.leases());
        assertThat(((ModeRoutingStore) store).local()).isSameAs(stack.leases());
        assertThat(stack.failSafe().breaker()).isSameAs(breaker);
    }

    @Test
    void withoutTheDenialCacheExactChecksGoStraightToTheFailSafeStore() {
        StoreStack stack = complete().denialCache(false).build();
        assertThat(stack.denialCache()).isEmpty();
        assertThat(stack.store().find(DenialCache.class)).isEmpty();
        assertThat(stack.store().find(FailSafeStore.class)).containsSame(stack.failSafe());
        stack.store().evaluate(List.of(exactCheck)).block(Duration.ofSeconds(1));
        assertThat(sharedCalls).hasValue(1);
    }

    @Test
    void memoryUntilSharedDecidesFromMemoryUntilTheSharedStoreAnswersThenFromIt() {
        AtomicBoolean answers = new AtomicBoolean();
        StoreStack stack = complete().memoryUntilShared(answers::get, "the test store").build();
        MemoryUntilShared switcher = stack.memoryUntilShared().orElseThrow();
        assertThat(stack.store()).isSameAs(switcher);
        assertThat(stack.store().find(FailSafeStore.class)).containsSame(stack.failSafe());
        assertThat(stack.store().find(LeaseStore.class)).containsSame(stack.leases());

        Verdict fromMemory = stack.store().evaluate(List.of(exactCheck)).block(Duration.ofSeconds(1));
        assertThat(fromMemory.allowed()).isTrue();
        assertThat(sharedCalls).as("the shared store is not asked before it answers").hasValue(0);

        answers.set(true);
        stack.store().evaluate(List.of(exactCheck)).block(Duration.ofSeconds(1));
        assertThat(switcher.onShared()).isTrue();
        assertThat(sharedCalls).hasValue(1);
    }
}

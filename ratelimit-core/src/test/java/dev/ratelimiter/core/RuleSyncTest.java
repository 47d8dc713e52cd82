package dev.ratelimiter.core;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/** The rule sync's lifecycle and where its work runs, on an in-memory store (the Redis store has its own tests). */
class RuleSyncTest {

    private final RuleSetFactory factory = new RuleSetFactory(new SpecRuleDefinitions("free"));

    @Test
    void afterAStopAndAStartChangesStillReachTheRulesInForce() {
        InMemoryRuleStore store = new InMemoryRuleStore();
        RuleSetHolder holder = new RuleSetHolder(factory.configured());
        RuleSync sync = new RuleSync(store, factory, holder, Duration.ofMillis(100));
        sync.start();
        try {
            store.putControl(RuntimeRules.KILL_SWITCH, "true").block();
            awaitUntil(() -> holder.get().killSwitch(), "the kill switch before the restart");

            sync.stop();
            sync.start();
            store.putControl(RuntimeRules.KILL_SWITCH, "false").block();
            // The sync's own announcement subscription or poll must apply it: nothing here refreshes by hand.
            awaitUntil(() -> !holder.get().killSwitch(), "the kill switch released after the restart");
        }
        finally {
            sync.stop();
        }
    }

    @Test
    void aRuleWrittenByHandThatOnlyConflictsWithAValidOneDoesNotDropTheValidOneOnAFreshInstance() {
        RuleStore store = new InMemoryRuleStore();
        store.putRule("keep", Map.of("capacity", "3", "refill-tokens", "1", "refill-period", "1h",
                "match.api-keys[0]", "abuser", "group", "g"), RuleStore.ANY_VERSION).block();
        RuleSync running = refreshed(store);
        assertThat(running.rulesInForce().rules()).containsKey("keep");

        // Valid alone, but the same group and match as "keep": the two do not validate together. The running instance
        // keeps its last good rule; one without a last good set takes them by id, "keep" first.
        store.putRule("twin", Map.of("capacity", "1", "refill-tokens", "1", "refill-period", "1h",
                "match.api-keys[0]", "abuser", "group", "g"), RuleStore.ANY_VERSION).block();
        store.putControl(RuntimeRules.KILL_SWITCH, "true").block();
        running.refresh().block(Duration.ofSeconds(5));
        RuleSync fresh = refreshed(store);

        for (RuleSync instance : new RuleSync[] { running, fresh }) {
            assertThat(instance.status().state()).isEqualTo(RuleSync.State.STORE_INVALID);
            assertThat(instance.status().problem()).contains("twin");
            assertThat(instance.rulesInForce().rules()).containsKey("keep").doesNotContainKey("twin");
            assertThat(instance.rulesInForce().killSwitch()).as("the store's switches").isTrue();
        }
    }

    @Test
    void aReadingOvertakenByANewerOneInForceIsNotApplied() {
        // A poll's reading, validated on a background thread, can come after an operator's change was read and
        // applied (seen: a kill switch released through the control endpoint, reported "not in force", because the
        // announcement of the switch thrown a moment before was applied last).
        InMemoryRuleStore store = new InMemoryRuleStore();
        RuleSync sync = refreshed(store);
        store.putControl(RuntimeRules.KILL_SWITCH, "true").block();
        RuntimeRules thrown = store.load().block();
        store.putControl(RuntimeRules.KILL_SWITCH, "false").block();
        RuntimeRules released = store.load().block();

        sync.apply(new RuleSync.Answer(11, released));
        sync.apply(new RuleSync.Answer(10, thrown));

        assertThat(sync.rulesInForce().killSwitch()).as("the older reading applied last").isFalse();
        assertThat(sync.status().version()).isEqualTo(released.version());
        sync.apply(new RuleSync.Answer(12, thrown));
        assertThat(sync.rulesInForce().killSwitch()).as("a newer reading, whatever its version").isTrue();
    }

    @Test
    void rulesAreValidatedOffTheThreadThatDeliveredThem() {
        // Redis's replies complete on Lettuce's I/O threads, which the limiter's decisions wait on too.
        ExecutorService io = Executors.newSingleThreadExecutor(runnable -> new Thread(runnable, "store-io"));
        try {
            InMemoryRuleStore memory = new InMemoryRuleStore();
            memory.putRule("keep", Map.of("capacity", "3", "refill-tokens", "1", "refill-period", "1h",
                    "match.api-keys[0]", "abuser"), RuleStore.ANY_VERSION).block();
            RuleStore answeringOnIo = new ForwardingRuleStore(memory) {
                @Override
                public Mono<RuntimeRules> load() {
                    return Mono.fromFuture(() -> CompletableFuture.supplyAsync(() -> memory.load().block(), io));
                }
            };
            RuleSync sync = new RuleSync(answeringOnIo, factory, new RuleSetHolder(factory.configured()),
                    Duration.ofHours(1));
            AtomicReference<String> applied = new AtomicReference<>();
            sync.refresh().doOnNext(rules -> applied.set(Thread.currentThread().getName()))
                    .block(Duration.ofSeconds(5));
            assertThat(sync.rulesInForce().rules()).containsKey("keep");
            assertThat(applied.get()).isEqualTo("ratelimit-background");
        }
        finally {
            io.shutdownNow();
        }
    }

    private RuleSync refreshed(RuleStore store) {
        RuleSync sync = new RuleSync(store, factory, new RuleSetHolder(factory.configured()), Duration.ofHours(1));
        sync.refresh().block(Duration.ofSeconds(5));
        return sync;
    }

    private static void awaitUntil(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited 5 s for " + what).isLessThan(deadline);
            Thread.onSpinWait();
        }
    }
}

package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import dev.ratelimiter.autoconfigure.rules.PropertyRuleDefinitions;
import dev.ratelimiter.core.ForwardingRuleStore;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuleStoreUntilShared;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.RuntimeRules;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code store.type: auto}: what an operator set while Redis was unreachable (and was told "in force on this
 * instance") survives the move to Redis. The shared store is played by an in-memory store behind the
 * {@link RuleStore} interface, which is all {@link RuleStoreUntilShared} sees; a real Redis is covered by
 * {@code RuleStoreFaultsIntegrationTest}.
 */
class AutoModeSwitchCarryTest {

    private final AtomicBoolean redisAnswers = new AtomicBoolean();
    private final AtomicBoolean redisRefusesWrites = new AtomicBoolean();
    private final InMemoryRuleStore redis = new InMemoryRuleStore();
    private final RuleStore shared = new WritesMayFail(redis, redisRefusesWrites::get);
    private final RuleStoreUntilShared store = new RuleStoreUntilShared(new InMemoryRuleStore(), shared,
            redisAnswers::get);
    private final RuleSetFactory factory = new RuleSetFactory(new PropertyRuleDefinitions(new RateLimitProperties()));
    private final RuleSetHolder holder = new RuleSetHolder(factory.configured());
    private final RuleSync sync = new RuleSync(store, factory, holder, Duration.ofMillis(50));
    private final RuleAdmin admin = new RuleAdmin(store, sync, factory);

    @AfterEach
    void stop() {
        sync.stop();
    }

    @Test
    void aKillSwitchPulledBeforeRedisAnsweredIsStillInForceAndSharedOnceItDoes() {
        sync.start();
        assertThat(admin.control(RuntimeRules.KILL_SWITCH, true).outcome().code()).isEqualTo(200);
        assertThat(holder.get().killSwitch()).isTrue();

        redisAnswers.set(true);
        store.sharedAnswered();

        awaitUntil(() -> stored(redis).control().containsKey(RuntimeRules.KILL_SWITCH));
        assertThat(stored(redis).control()).containsEntry(RuntimeRules.KILL_SWITCH, "true");
        // The move is announced after the switch is written; the reload it causes finds the switch on in Redis.
        sync.refresh().block(Duration.ofSeconds(5));
        assertThat(holder.get().killSwitch()).as("the kill switch the operator was told is in force").isTrue();
        // From now on, writes go to Redis, where every instance reads them.
        assertThat(admin.control(RuntimeRules.KILL_SWITCH, false).outcome().code()).isEqualTo(200);
        assertThat(stored(redis).control()).containsEntry(RuntimeRules.KILL_SWITCH, "false");
        assertThat(holder.get().killSwitch()).isFalse();
    }

    @Test
    void whileRedisRefusesTheCarriedSwitchesMemoryStaysInForceAndTheMoveIsTriedAgain() {
        sync.start();
        assertThat(admin.control(RuntimeRules.KILL_SWITCH, true).outcome().code()).isEqualTo(200);
        redisAnswers.set(true);
        redisRefusesWrites.set(true);

        store.sharedAnswered();
        sync.refresh().block(Duration.ofSeconds(5));
        assertThat(holder.get().killSwitch()).as("still on memory, where the switch is on").isTrue();
        assertThat(stored(redis).control()).isEmpty();

        redisRefusesWrites.set(false);
        store.sharedAnswered();
        awaitUntil(() -> "true".equals(stored(redis).control().get(RuntimeRules.KILL_SWITCH)));
        sync.refresh().block(Duration.ofSeconds(5));
        assertThat(holder.get().killSwitch()).isTrue();
    }

    @Test
    void runtimeRulesWrittenToMemoryAreNotPushedOverTheSharedStoresOwn() {
        sync.start();
        Map<String, Object> mine = Map.of("capacity", 5, "refill-tokens", 5, "refill-period", "1s",
                "match.api-keys[0]", "mine");
        assertThat(admin.put("mine", mine).outcome().code()).isEqualTo(200);
        redis.putRule("theirs", Map.of("capacity", "9", "refill-tokens", "9", "refill-period", "1s",
                "match.api-keys[0]", "theirs"), RuleStore.ANY_VERSION).block();

        redisAnswers.set(true);
        store.sharedAnswered();
        awaitUntil(() -> holder.get().rules().containsKey("theirs"));

        assertThat(stored(redis).specs()).containsOnlyKeys("theirs");
        assertThat(holder.get().rules()).doesNotContainKey("mine").containsKey("theirs");
    }

    @Test
    void aKillSwitchPressedWhileTheSwitchesAreBeingCarriedIsCarriedToo() {
        InMemoryRuleStore memory = new InMemoryRuleStore();
        InMemoryRuleStore shared = new InMemoryRuleStore();
        Sinks.One<Boolean> landed = Sinks.one();
        RuleStore slowShared = new WritesMayFail(shared, () -> false) {
            @Override
            public Mono<Long> putControl(String name, String value) {
                return landed.asMono().then(shared.putControl(name, value));
            }
        };
        RuleStoreUntilShared moving = new RuleStoreUntilShared(memory, slowShared, () -> true);
        memory.putControl(RuntimeRules.enforceKey("free"), "false").block();

        moving.sharedAnswered(); // the carry's first write waits for "landed"
        assertThat(moving.putControl(RuntimeRules.KILL_SWITCH, "true").block(Duration.ofSeconds(5))).isNotNull();
        landed.tryEmitValue(true);

        RuntimeRules after = moving.load().block(Duration.ofSeconds(5));
        assertThat(stored(shared).control()).as("in the shared store, for every instance")
                .containsEntry(RuntimeRules.KILL_SWITCH, "true")
                .containsEntry(RuntimeRules.enforceKey("free"), "false");
        assertThat(after.control()).containsEntry(RuntimeRules.KILL_SWITCH, "true");
    }

    @Test
    void aSwitchReleasedHereDuringTheOutageDoesNotReleaseOneThatOtherInstancesSet() {
        InMemoryRuleStore memory = new InMemoryRuleStore();
        InMemoryRuleStore shared = new InMemoryRuleStore();
        memory.putControl(RuntimeRules.KILL_SWITCH, "true").block();
        memory.putControl(RuntimeRules.KILL_SWITCH, "false").block();
        memory.putControl(RuntimeRules.enforceKey("pro"), "true").block();
        shared.putControl(RuntimeRules.KILL_SWITCH, "true").block();
        shared.putControl(RuntimeRules.enforceKey("pro"), "false").block();

        new RuleStoreUntilShared(memory, shared, () -> true).sharedAnswered();

        // Only the rollback direction (kill switch on, enforcement off) wins over the shared store's own value.
        assertThat(stored(shared).control()).containsEntry(RuntimeRules.KILL_SWITCH, "true")
                .containsEntry(RuntimeRules.enforceKey("pro"), "false");
    }

    private static RuntimeRules stored(RuleStore store) {
        return store.load().block(Duration.ofSeconds(5));
    }

    private void awaitUntil(BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited 5 s for the move to Redis").isLessThan(deadline);
            sync.refresh().block(Duration.ofSeconds(5));
            Thread.onSpinWait();
        }
    }

    /** A shared store whose writes can be made to fail, as a Redis that answers PING but refuses writes. */
    private static class WritesMayFail extends ForwardingRuleStore {

        private final BooleanSupplier refuse;

        WritesMayFail(RuleStore delegate, BooleanSupplier refuse) {
            super(delegate);
            this.refuse = refuse;
        }

        @Override
        public Mono<Long> putRule(String id, Map<String, String> spec, long expectedVersion) {
            return refused().switchIfEmpty(Mono.defer(() -> super.putRule(id, spec, expectedVersion)));
        }

        @Override
        public Mono<Long> deleteRule(String id, long expectedVersion) {
            return refused().switchIfEmpty(Mono.defer(() -> super.deleteRule(id, expectedVersion)));
        }

        @Override
        public Mono<Long> putControl(String name, String value) {
            return refused().switchIfEmpty(Mono.defer(() -> super.putControl(name, value)));
        }

        private Mono<Long> refused() {
            return Mono.defer(() -> refuse.getAsBoolean()
                    ? Mono.error(new IllegalStateException("READONLY You can't write against a read only replica"))
                    : Mono.empty());
        }
    }
}

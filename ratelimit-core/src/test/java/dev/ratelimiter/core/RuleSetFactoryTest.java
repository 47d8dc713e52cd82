package dev.ratelimiter.core;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The rule lifecycle without Spring: the configured rules, the stored rules over them, and the rule sync reading a
 * store, on {@link SpecRuleDefinitions} and an in-memory store.
 */
class RuleSetFactoryTest {

    private static final Map<String, String> LOGIN = Map.of("capacity", "3", "refill-period", "1m");

    private final SpecRuleDefinitions definitions = new SpecRuleDefinitions("free")
            .tier("free", 10, "free-key")
            .tier("pro", 100, "pro-key")
            .rule("login", LOGIN);
    private final RuleSetFactory factory = new RuleSetFactory(definitions);

    @Test
    void withAnEmptyStoreTheConfiguredRulesAloneAreInForce() {
        RuleSet configured = factory.configured();

        assertThat(configured.rules()).containsOnlyKeys("free.default", "pro.default", "login");
        assertThat(configured.tierOf("pro-key")).isEqualTo("pro");
        assertThat(configured.tierOf("nobody")).isEqualTo("free");
        assertThat(configured.killSwitch()).isFalse();
        assertThat(configured.version()).isZero();
        assertThat(factory.isConfigured("login")).isTrue();
        assertThat(factory.isConfigured("pro.default")).as("a tier default").isTrue();
        assertThat(factory.isConfigured("extra")).isFalse();
    }

    @Test
    void aStoredRuleReplacesTheConfiguredOneOfItsIdAndStoredSwitchesOverrideConfiguredOnes() {
        definitions.killSwitch(false);
        RuleSet rules = factory.create(new RuntimeRules(7, Map.of("login", Map.of("capacity", "9"),
                "extra", Map.of("capacity", "5")), Map.of(RuntimeRules.KILL_SWITCH, "true",
                        RuntimeRules.enforceKey("pro"), "false", "tier.bad name.enforce", "false")));

        assertThat(rules.version()).isEqualTo(7);
        assertThat(((TokenBucketLimit) rules.rules().get("login").limit()).capacity()).isEqualTo(9);
        assertThat(rules.rules()).containsKeys("free.default", "pro.default", "extra");
        assertThat(rules.killSwitch()).isTrue();
        assertThat(rules.enforced("pro")).isFalse();
        assertThat(rules.enforced("free")).as("a switch no write could make is skipped").isTrue();
    }

    @Test
    void enabledFalseAloneSwitchesAConfiguredRuleOffAndAnInvalidStoredRuleIsRefusedByItsSetting() {
        RuleSet off = factory.create(new RuntimeRules(2, Map.of("login", Map.of("enabled", "false"),
                "free.default", Map.of("enabled", "false")), Map.of()));
        assertThat(off.rules()).containsOnlyKeys("pro.default");

        assertThatThrownBy(() -> factory.create(new RuntimeRules(3, Map.of("broken", Map.of("capacity", "0")),
                Map.of()))).isInstanceOfSatisfying(InvalidLimitException.class,
                        ex -> assertThat(ex.setting()).isEqualTo("ratelimit.rules.broken.capacity"));
    }

    @Test
    void aDefaultTierNoTierHasIsRefusedAtStartUp() {
        RuleSetFactory lost = new RuleSetFactory(new SpecRuleDefinitions("gold").tier("free", 10));
        assertThatThrownBy(lost::configured).isInstanceOfSatisfying(InvalidLimitException.class,
                ex -> assertThat(ex.setting()).isEqualTo("ratelimit.default-tier"));
    }

    @Test
    void aBadStoredRuleIsSkippedWhileTheGoodOnesAndTheKillSwitchApply() {
        InMemoryRuleStore store = new InMemoryRuleStore();
        store.putRule("extra", Map.of("capacity", "5"), RuleStore.ANY_VERSION).block();
        store.putRule("broken", Map.of("capacity", "0"), RuleStore.ANY_VERSION).block();
        store.putControl(RuntimeRules.KILL_SWITCH, "true").block();
        RuleSetHolder holder = new RuleSetHolder(factory.configured());
        RuleSync sync = new RuleSync(store, factory, holder, Duration.ofHours(1));

        sync.refreshAndWait();

        assertThat(sync.status().state()).isEqualTo(RuleSync.State.STORE_INVALID);
        assertThat(sync.status().problem()).contains("broken");
        assertThat(holder.get().rules()).containsKeys("extra", "login").doesNotContainKey("broken");
        assertThat(holder.get().killSwitch()).isTrue();
        assertThat(sync.runtime().specs()).containsOnlyKeys("extra");
    }

    @Test
    void startReadsTheStoreBeforeItReturnsThePollFollowsItAndStopEndsThePoll() {
        InMemoryRuleStore memory = new InMemoryRuleStore();
        RuleStore unannounced = new ForwardingRuleStore(memory) {
            @Override
            public Flux<Long> changes() {
                return Flux.never(); // only the poll can see a change
            }
        };
        memory.putRule("extra", Map.of("capacity", "5"), RuleStore.ANY_VERSION).block();
        RuleSetHolder holder = new RuleSetHolder(factory.configured());
        RuleSync sync = new RuleSync(unannounced, factory, holder, Duration.ofMillis(50));

        sync.start();
        try {
            assertThat(holder.get().rules()).as("read before start returned").containsKey("extra");
            assertThat(sync.status().state()).isEqualTo(RuleSync.State.IN_SYNC);

            memory.putRule("later", Map.of("capacity", "5"), RuleStore.ANY_VERSION).block();
            awaitUntil(() -> holder.get().rules().containsKey("later"));
        }
        finally {
            sync.stop();
        }
        memory.putRule("after-stop", Map.of("capacity", "5"), RuleStore.ANY_VERSION).block();
        sleep(Duration.ofMillis(300)); // six poll intervals
        assertThat(holder.get().rules()).as("no poll after stop").doesNotContainKey("after-stop");
    }

    private static void awaitUntil(java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited 5 s").isLessThan(deadline);
            sleep(Duration.ofMillis(5));
        }
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError(ex);
        }
    }
}

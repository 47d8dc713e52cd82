package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimiter.autoconfigure.rules.PropertyRuleDefinitions;
import dev.ratelimiter.core.ForwardingRuleStore;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleChange;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.RuntimeRules;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two operators changing rules at once, on two instances sharing one rule store: rules that are each valid but
 * conflict together (same group, same match) must never both land, and the rule set in force must always validate.
 */
class RuleAdminRaceTest {

    private final RuleStore shared = new InMemoryRuleStore();
    private final List<RuleSync> syncs = new ArrayList<>();

    @AfterEach
    void stop() {
        syncs.forEach(RuleSync::stop);
    }

    @Test
    void aRuleValidatedAgainstAnOlderVersionIsValidatedAgainAndRefusedWhenItConflicts() {
        AtomicBoolean otherWent = new AtomicBoolean();
        // The other instance writes its rule in the window between this instance's validation and its write.
        RuleStore racing = new ForwardingRuleStore(shared) {
            @Override
            public Mono<Long> putRule(String id, Map<String, String> spec, long expectedVersion) {
                if (otherWent.compareAndSet(false, true)) {
                    shared.putRule("theirs", spec, RuleStore.ANY_VERSION).block();
                }
                return shared.putRule(id, spec, expectedVersion);
            }
        };
        RuleAdmin admin = admin(racing);
        RuleChange result = admin.put("mine", conflicting());

        assertThat(result.outcome().code()).as(result.toString()).isEqualTo(400);
        assertThat(result.reason().toString()).contains("'theirs'").contains("'mine'")
                .contains("same group");
        RuntimeRules stored = shared.load().block();
        assertThat(stored.specs()).containsOnlyKeys("theirs");
    }

    @Test
    void twoInstancesPostingConflictingRulesAtOnceNeverLeaveARuleSetThatDoesNotValidate() throws Exception {
        RuleAdmin first = admin(shared);
        RuleAdmin second = admin(shared);
        Random random = new Random(42);
        int bothLanded = 0;
        for (int round = 0; round < 100; round++) {
            int thisRound = round;
            String a = "a-" + round;
            String b = "b-" + round;
            CountDownLatch start = new CountDownLatch(1);
            RuleChange[] results = new RuleChange[2];
            Thread one = new Thread(() -> {
                await(start);
                results[0] = first.put(a, conflicting(thisRound));
            });
            Thread two = new Thread(() -> {
                await(start);
                if (random.nextBoolean()) {
                    Thread.onSpinWait();
                }
                results[1] = second.put(b, conflicting(thisRound));
            });
            one.start();
            two.start();
            start.countDown();
            one.join(10_000);
            two.join(10_000);
            RuntimeRules stored = shared.load().block();
            boolean landedA = stored.specs().containsKey(a);
            boolean landedB = stored.specs().containsKey(b);
            bothLanded += landedA && landedB ? 1 : 0;
            assertThat(landedA || landedB).as("round " + round + ": one of them lands " + results[0] + " "
                    + results[1]).isTrue();
            assertThat(results[0].outcome().code() == 200).isEqualTo(landedA);
            assertThat(results[1].outcome().code() == 200).isEqualTo(landedB);
            // The loser's answer names the conflict (400) or, after three lost races, asks to retry (409).
            assertThat(results[landedA ? 1 : 0].outcome().code()).isIn(400, 409);
            syncs.get(0).validate(stored);
        }
        assertThat(bothLanded).isZero();
    }

    private RuleAdmin admin(RuleStore store) {
        RuleSetFactory factory = new RuleSetFactory(new PropertyRuleDefinitions(properties()));
        RuleSync sync = new RuleSync(store, factory, new RuleSetHolder(factory.configured()), Duration.ofHours(1));
        sync.start();
        syncs.add(sync);
        return new RuleAdmin(store, sync, factory);
    }

    /** A free tier of 10 per second as the configured rules; also the base of {@link RuleDocumentFuzzTest}. */
    static RateLimitProperties properties() {
        RateLimitProperties properties = new RateLimitProperties();
        properties.setDefaultTier("free");
        LimitProperties limit = new LimitProperties();
        limit.setCapacity(10);
        limit.setRefillTokens(10);
        RateLimitProperties.Tier free = new RateLimitProperties.Tier();
        free.setLimits(Map.of("default", limit));
        properties.setTiers(Map.of("free", free));
        return properties;
    }

    /** Valid alone; two of them conflict: same group, same match. */
    private static Map<String, Object> conflicting() {
        return conflicting(0);
    }

    private static Map<String, Object> conflicting(int round) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("group", "shared-group-" + round);
        spec.put("match.tiers", List.of("free"));
        spec.put("capacity", 5);
        spec.put("refillTokens", 5);
        return spec;
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}

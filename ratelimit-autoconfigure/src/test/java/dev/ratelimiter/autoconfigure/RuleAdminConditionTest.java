package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
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
import dev.ratelimiter.core.WriteCondition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Conditional rule writes (the rules API's If-Match / If-None-Match): checked against the store's latest rules and
 * kept by its conditional write, so a write whose version went stale between the check and the write is refused,
 * not validated again and written over the other.
 */
class RuleAdminConditionTest {

    private final RuleStore shared = new InMemoryRuleStore();
    private RuleSync sync;

    @AfterEach
    void stop() {
        sync.stop();
    }

    private RuleAdmin admin(RuleStore store) {
        RuleSetFactory factory = new RuleSetFactory(new PropertyRuleDefinitions(RuleAdminRaceTest.properties()));
        sync = new RuleSync(store, factory, new RuleSetHolder(factory.configured()), Duration.ofHours(1));
        sync.start();
        return new RuleAdmin(store, sync, factory);
    }

    private static Map<String, Object> bucket(int capacity) {
        return Map.of("capacity", capacity, "refillTokens", 1, "refillPeriod", "1m",
                "match", Map.of("routeIds", java.util.List.of("nothing-routes-here")));
    }

    @Test
    void aWriteWhoseVersionWentStaleBetweenTheCheckAndTheWriteIsRefusedAndTheOtherStays() {
        long version = shared.putRule("raced", Map.of("capacity", "1", "refill-tokens", "1"), RuleStore.ANY_VERSION)
                .block();
        AtomicBoolean otherWent = new AtomicBoolean();
        // the other operator's write lands after this one's check and validation, before its write
        RuleStore racing = new ForwardingRuleStore(shared) {
            @Override
            public Mono<Long> putRule(String id, Map<String, String> spec, long expectedVersion) {
                if (otherWent.compareAndSet(false, true)) {
                    shared.putRule(id, Map.of("capacity", "77", "refill-tokens", "1"), expectedVersion).block();
                }
                return shared.putRule(id, spec, expectedVersion);
            }
        };
        RuleChange mine = admin(racing).put("raced", bucket(5), "me", WriteCondition.atVersion(Set.of(version)));

        assertThat(mine.outcome()).as(mine.toString()).isEqualTo(RuleChange.Outcome.PRECONDITION_FAILED);
        assertThat(mine.reason()).contains("version " + (version + 1));
        assertThat(shared.load().block().specs().get("raced")).containsEntry("capacity", "77");
    }

    @Test
    void createOnlyAndReplaceOnlyAreCheckedAgainstTheStoreAndTheConfiguration() {
        RuleAdmin admin = admin(shared);
        assertThat(admin.put("fresh", bucket(2), "me", WriteCondition.present()).outcome())
                .isEqualTo(RuleChange.Outcome.PRECONDITION_FAILED);
        assertThat(admin.put("fresh", bucket(2), "me", WriteCondition.absent()).isApplied()).isTrue();
        assertThat(admin.put("fresh", bucket(3), "me", WriteCondition.absent()).outcome())
                .isEqualTo(RuleChange.Outcome.PRECONDITION_FAILED);
        // a configured rule exists, though the store does not hold it
        assertThat(admin.put("free.default", bucket(3), "me", WriteCondition.absent()).outcome())
                .isEqualTo(RuleChange.Outcome.PRECONDITION_FAILED);
        assertThat(shared.load().block().specs().get("fresh")).containsEntry("capacity", "2");
        assertThat(admin.delete("fresh", "me", WriteCondition.atVersion(Set.of(0L))).outcome())
                .isEqualTo(RuleChange.Outcome.PRECONDITION_FAILED);
        assertThat(admin.delete("fresh", "me", WriteCondition.present()).isApplied()).isTrue();
    }
}

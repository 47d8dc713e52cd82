package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.Map;

import dev.ratelimiter.autoconfigure.rules.PropertyRuleDefinitions;
import dev.ratelimiter.autoconfigure.rules.RuleProblems;
import dev.ratelimiter.core.ForwardingRuleStore;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleChange;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.RuntimeRules;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rule write the store does not answer: only one that failed before it was sent may be answered "nothing changed".
 * One that timed out once sent may be applied when the store answers again, so its answer says the outcome is unknown
 * and to read the rules before retrying, on the actuator endpoint and the rules API alike.
 */
class RuleAdminUnansweredWriteTest {

    private final RuleStore shared = new InMemoryRuleStore();
    private RuleSync sync;

    @AfterEach
    void stop() {
        sync.stop();
    }

    @Test
    void aRuleWriteThatTimesOutOnceSentIsAnsweredAsMaybeApplied() {
        RuleStore unanswered = new ForwardingRuleStore(shared) {
            @Override
            public Mono<Long> putRule(String id, Map<String, String> spec, long expectedVersion) {
                return Mono.never();
            }
        };
        RuleChange change = admin(unanswered).put("unanswered", bucket(), "me");
        assertThat(change.outcome()).as(change.toString()).isEqualTo(RuleChange.Outcome.UNAVAILABLE);
        assertThat(change.error()).isEqualTo(RuleAdmin.OUTCOME_UNKNOWN).isEqualTo("rule_store_outcome_unknown");
        assertThat(change.reason()).contains("may or may not have been applied").contains("Read the current rules")
                .doesNotContain("nothing changed");
        Object problem = RuleProblems.answer("/v1/rules/unanswered", HttpStatus.SERVICE_UNAVAILABLE,
                change.error(), null, change.reason()).body();
        assertThat(problem).asInstanceOf(InstanceOfAssertFactories.MAP).containsEntry("type", "urn:ratelimit:problem:rule-store-outcome-unknown")
                .containsEntry("title", "The change may or may not have been applied")
                .containsEntry("error", "rule_store_outcome_unknown");
    }

    @Test
    void aSwitchWriteThatFailedBeforeItWasSentSaysNothingChanged() {
        RuleStore unconnected = new ForwardingRuleStore(shared) {
            @Override
            public Mono<Long> putControl(String name, String value) {
                return Mono.error(new RuleStore.NotSentException("not connected yet", null));
            }
        };
        RuleChange change = admin(unconnected).control(RuntimeRules.KILL_SWITCH, true, "me");
        assertThat(change.error()).as(change.toString()).isEqualTo("rule_store_unavailable");
        assertThat(change.reason()).contains("nothing changed");
    }

    private RuleAdmin admin(RuleStore store) {
        RuleSetFactory factory = new RuleSetFactory(new PropertyRuleDefinitions(RuleAdminRaceTest.properties()));
        sync = new RuleSync(store, factory, new RuleSetHolder(factory.configured()), Duration.ofHours(1));
        sync.start();
        return new RuleAdmin(store, sync, factory);
    }

    private static Map<String, Object> bucket() {
        return Map.of("capacity", 5, "refillTokens", 1, "refillPeriod", "1m",
                "match", Map.of("routeIds", java.util.List.of("nothing-routes-here")));
    }
}

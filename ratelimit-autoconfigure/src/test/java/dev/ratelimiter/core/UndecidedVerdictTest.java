package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The backstop verdict of a request whose decision never came: each rule by its failure mode, nothing counted. A
 * stuck decision must neither open a rule that promised to fail closed, nor refuse what an open rule would let by.
 */
class UndecidedVerdictTest {

    private final RequestAttributes request = Fixtures.request("k1", "free", null);

    @Test
    void anEnforcedFailClosedRuleRefusesWith503AndNamesItself() {
        RuleSet rules = RuleSet.builder("free").rule(rule("login", FailureMode.CLOSED, Mode.ENFORCE))
                .rule(rule("open", FailureMode.OPEN, Mode.ENFORCE)).build();
        Verdict verdict = evaluator(rules).undecided(rules, request);
        assertThat(verdict.allowed()).isFalse();
        assertThat(verdict.reason()).isEqualTo(Verdict.Reason.STORE_UNAVAILABLE);
        assertThat(verdict.outcomes()).extracting(RuleOutcome::rule).extracting(Rule::id).containsExactly("login");
        assertThat(verdict.outcomes().get(0).retryAfter()).isEqualTo(WithoutStore.SHORTEST_RETRY_AFTER);
    }

    @Test
    void openLocalAndShadowRulesLetTheRequestThrough() {
        RuleSet rules = RuleSet.builder("free").rule(rule("open", FailureMode.OPEN, Mode.ENFORCE))
                .rule(rule("local", FailureMode.LOCAL, Mode.ENFORCE))
                .rule(rule("watched", FailureMode.CLOSED, Mode.SHADOW)).build();
        Verdict verdict = evaluator(rules).undecided(rules, request);
        assertThat(verdict.allowed()).isTrue();
        assertThat(verdict.outcomes()).isEmpty();
    }

    @Test
    void theKillSwitchAndAnUnenforcedTierAllowEvenAFailClosedRule() {
        RuleSet killed = RuleSet.builder("free").rule(rule("login", FailureMode.CLOSED, Mode.ENFORCE))
                .killSwitch(true).build();
        assertThat(evaluator(killed).undecided(killed, request).reason()).isEqualTo(Verdict.Reason.KILL_SWITCH);
        RuleSet shadowTier = RuleSet.builder("free").rule(rule("login", FailureMode.CLOSED, Mode.ENFORCE))
                .enforce("free", false).build();
        assertThat(evaluator(shadowTier).undecided(shadowTier, request).allowed()).isTrue();
    }

    @Test
    void aFailClosedRuleThatDoesNotApplyRefusesNothing() {
        Rule otherTier = new Rule("paid-login", "paid-login", Fixtures.matchTiers("paid"), List.of(Dimension.API_KEY),
                TokenBucketLimit.of("paid-login.", 5, 1, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.CLOSED);
        RuleSet rules = RuleSet.builder("free").rule(otherTier).build();
        assertThat(evaluator(rules).undecided(rules, request).allowed()).isTrue();
    }

    private static Rule rule(String id, FailureMode failureMode, Mode mode) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of(id + ".", 5, 1, Duration.ofSeconds(1)), 0, mode, failureMode);
    }

    private static RateLimitEvaluator evaluator(RuleSet rules) {
        return new RateLimitEvaluator(() -> rules, new LocalBucketStore(100), ClientIds.unkeyed());
    }
}

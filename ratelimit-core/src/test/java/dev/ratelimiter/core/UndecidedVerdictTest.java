package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.Set;

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

    /** A check of a concurrency rule must name a permit set: the backstop once threw building it (a 500). */
    @Test
    void anEnforcedFailClosedConcurrencyRuleRefusesWith503() {
        Rule inFlight = new Rule("in-flight", "in-flight", Match.ANY, List.of(Dimension.API_KEY),
                ConcurrencyLimit.of("in-flight.", 3, Duration.ofSeconds(30)), 0, Mode.ENFORCE, FailureMode.CLOSED);
        RuleSet rules = RuleSet.builder("free").rule(inFlight).build();
        Verdict verdict = evaluator(rules).undecided(rules, request);
        assertThat(verdict.allowed()).isFalse();
        assertThat(verdict.reason()).isEqualTo(Verdict.Reason.STORE_UNAVAILABLE);
        assertThat(verdict.permitsHeld()).isEmpty();
    }

    /**
     * Matching itself fails (a request without a route id against a rule by route id: an immutable set refuses to
     * look up null): the backstop must still answer, every enforced fail-closed rule taken to apply.
     */
    @Test
    void whenTheRulesThatApplyCannotBeWorkedOutOnlyAFailClosedRuleRefuses() {
        RequestAttributes unrouted = new RequestAttributes("k1", null, null, "10.0.0.1", null, "/api/x", null, "free",
                1);
        Match byRoute = new Match(Set.of("login"), List.of(), Set.of(), Set.of(), Set.of());
        RuleSet closed = RuleSet.builder("free").rule(rule("login", byRoute, FailureMode.CLOSED)).build();
        assertThat(evaluator(closed).undecided(closed, unrouted).reason())
                .isEqualTo(Verdict.Reason.STORE_UNAVAILABLE);
        RuleSet open = RuleSet.builder("free").rule(rule("login", byRoute, FailureMode.OPEN)).build();
        assertThat(evaluator(open).undecided(open, unrouted).allowed()).isTrue();
    }

    private static Rule rule(String id, Match match, FailureMode failureMode) {
        return new Rule(id, id, match, List.of(Dimension.API_KEY),
                TokenBucketLimit.of(id + ".", 5, 1, Duration.ofSeconds(1)), 0, Mode.ENFORCE, failureMode);
    }

    private static Rule rule(String id, FailureMode failureMode, Mode mode) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of(id + ".", 5, 1, Duration.ofSeconds(1)), 0, mode, failureMode);
    }

    private static RateLimitEvaluator evaluator(RuleSet rules) {
        return new RateLimitEvaluator(() -> rules, new LocalBucketStore(100), ClientIds.unkeyed());
    }
}

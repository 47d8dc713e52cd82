package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A per-tenant cap of 3 and requests that leave the tenant out. Before, such requests skipped the cap: leaving the
 * header out escaped it.
 */
class WhenMissingTest {

    private final TokenBucketLimit three = TokenBucketLimit.of("tenant-cap.", 3, 1, Duration.ofHours(1));

    @Test
    void sharedPutsEveryRequestLackingTheValueInOneBucket() {
        RateLimitEvaluator evaluator = evaluator(WhenMissing.SHARED, Mode.ENFORCE);
        List<Boolean> anonymous = List.of(allowed(evaluator, "k1", null), allowed(evaluator, "k2", null),
                allowed(evaluator, "k3", null), allowed(evaluator, "k4", null), allowed(evaluator, "k5", null));
        assertThat(anonymous).as("five clients without a tenant share one cap").containsExactly(true, true, true,
                false, false);
        assertThat(allowed(evaluator, "k1", "t1")).as("a tenant has its own bucket").isTrue();
    }

    @Test
    void denyRefusesTheRequestWithoutAskingTheStore() {
        RateLimitEvaluator evaluator = evaluator(WhenMissing.DENY, Mode.ENFORCE);
        Verdict verdict = evaluator.check(request("k1", null), new RequestPermits()).block();
        assertThat(verdict.allowed()).isFalse();
        assertThat(verdict.reason()).isEqualTo(Verdict.Reason.MISSING_IDENTITY);
        assertThat(verdict.outcomes()).extracting(RuleOutcome::rule).extracting(Rule::id).containsExactly("tenant-cap");
        assertThat(RateLimitEvaluator.missingOf(verdict.outcomes().get(0).rule(), request("k1", null)))
                .isEqualTo(Dimension.TENANT);
        for (int i = 0; i < 3; i++) {
            assertThat(allowed(evaluator, "k1", "t1")).isTrue();
        }
        assertThat(allowed(evaluator, "k1", "t1")).isFalse();
    }

    @Test
    void aShadowRuleThatWouldDenyLetsTheRequestThrough() {
        RateLimitEvaluator evaluator = evaluator(WhenMissing.DENY, Mode.SHADOW);
        for (int i = 0; i < 5; i++) {
            assertThat(allowed(evaluator, "k1", null)).isTrue();
        }
    }

    @Test
    void skipLetsRequestsLackingTheValuePast() {
        RateLimitEvaluator evaluator = evaluator(WhenMissing.SKIP, Mode.ENFORCE);
        for (int i = 0; i < 5; i++) {
            assertThat(allowed(evaluator, "k" + i, null)).isTrue();
        }
        assertThat(evaluator.check(request("k1", null), new RequestPermits()).block().reason())
                .isEqualTo(Verdict.Reason.NO_RULE);
    }

    private RateLimitEvaluator evaluator(WhenMissing whenMissing, Mode mode) {
        Rule cap = new Rule("tenant-cap", "tenant-cap", Match.ANY, List.of(Dimension.TENANT), three, 0, mode,
                FailureMode.LOCAL, StoreMode.EXACT, 1, whenMissing);
        RuleSet rules = RuleSet.builder("free").rule(cap).build();
        return new RateLimitEvaluator(() -> rules, new LocalBucketStore(1000), ClientIds.unkeyed());
    }

    private static boolean allowed(RateLimitEvaluator evaluator, String apiKey, String tenant) {
        return evaluator.check(request(apiKey, tenant), new RequestPermits()).block().allowed();
    }

    private static RequestAttributes request(String apiKey, String tenant) {
        return new RequestAttributes(apiKey, null, tenant, "10.0.0.1", "api", "/api/x", "default", "free", 1);
    }
}

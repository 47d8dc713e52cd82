package dev.ratelimiter.core;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A region's share of global rules: the default split every region computes alike, the rebalancer's published
 * shares, and the evaluator checking each request against its region's share.
 */
class RegionSharesTest {

    static final Map<String, Double> THREE = Map.of("us-east-1", 1.0, "eu-central-1", 1.0, "ap-southeast-1", 1.0);

    static final BucketKey BUCKET = new BucketKey("AAAAAAAAAAAAAAAAAAAAAA", "api@t");

    @Test
    void theDefaultSplitSumsToTheLimitWithTheRemainderToTheRegionFirstByName() {
        long[] split = new RegionShares("us-east-1", THREE).defaultSplit(1_000);
        assertThat(split).containsExactly(334, 333, 333); // ap-southeast-1, eu-central-1, us-east-1
        for (String region : THREE.keySet()) {
            long sum = 0;
            RegionShares shares = new RegionShares(region, THREE);
            for (String other : THREE.keySet()) {
                sum += new RegionShares(other, THREE).ruleFor(rule(Scope.GLOBAL, 1_000), BUCKET).limit().quota();
            }
            assertThat(sum).as("every region's share, computed in each region alike").isEqualTo(1_000);
            assertThat(shares.regions()).containsExactly("ap-southeast-1", "eu-central-1", "us-east-1");
        }
    }

    @Test
    void aRegionalRuleIsCheckedWholeAndAGlobalOneOnTheShareOfItsBucket() {
        RegionShares shares = new RegionShares("us-east-1", THREE);
        Rule regional = rule(Scope.REGIONAL, 1_000);
        assertThat(shares.ruleFor(regional, BUCKET)).isSameAs(regional);
        Rule global = rule(Scope.GLOBAL, 1_000);
        Rule share = shares.ruleFor(global, BUCKET);
        assertThat(share.limit().quota()).isEqualTo(333);
        assertThat(share.scope()).isEqualTo(Scope.GLOBAL);
        assertThat(share.id()).isEqualTo(global.id());
        TokenBucketLimit whole = (TokenBucketLimit) global.limit();
        TokenBucketLimit part = (TokenBucketLimit) share.limit();
        assertThat(part.tokensPerSecond()).as("the rate in proportion, not rounded to whole tokens per period")
                .isCloseTo(whole.tokensPerSecond() * 333 / 1_000, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(part.window()).isEqualTo(whole.window());
        assertThat(part.shape()).isEqualTo(whole.shape());
        assertThat(shares.ruleFor(global, BUCKET)).as("made once per rule").isSameAs(share);

        shares.apply(RegionShares.shareKey(BUCKET), 1_000, Map.of("us-east-1", 900L, "eu-central-1", 50L,
                "ap-southeast-1", 50L));
        assertThat(shares.ruleFor(global, BUCKET).limit().quota()).isEqualTo(900);
        assertThat(shares.ruleFor(global, new BucketKey("BBBBBBBBBBBBBBBBBBBBBB", "api@t")).limit().quota())
                .as("another client's bucket keeps the default").isEqualTo(333);
        assertThat(shares.moved()).isEqualTo(1);
    }

    @Test
    void untilTheSharesAreReadABucketHoldsTheFloorThenTheDefaultSplit() {
        RegionShares shares = new RegionShares("us-east-1", THREE);
        shares.awaitShares(0.05);
        Rule global = rule(Scope.GLOBAL, 1_000);
        Rule held = shares.ruleFor(global, BUCKET);
        assertThat(held.limit().quota()).as("5 % of 1,000, below the default split of 333").isEqualTo(50);
        assertThat(shares.ruleFor(global, BUCKET)).as("made once per rule").isSameAs(held);
        assertThat(shares.ruleFor(rule(Scope.GLOBAL, 2_000), BUCKET).limit().quota())
                .as("a rule replaced under the same id is held anew").isEqualTo(100);

        shares.sharesRead();

        assertThat(shares.ruleFor(global, BUCKET).limit().quota()).isEqualTo(333);
    }

    @Test
    void sharesOfAnotherLimitATombstoneOrAMissingRegionMeanTheDefaultSplit() {
        RegionShares shares = new RegionShares("us-east-1", THREE);
        String key = RegionShares.shareKey(BUCKET);
        shares.apply(key, 600, Map.of("us-east-1", 500L, "eu-central-1", 50L, "ap-southeast-1", 50L));
        assertThat(shares.ruleFor(rule(Scope.GLOBAL, 1_000), BUCKET).limit().quota())
                .as("shares of a limit the rule no longer has").isEqualTo(333);
        shares.apply(key, 1_000, Map.of("eu-central-1", 900L));
        assertThat(shares.ruleFor(rule(Scope.GLOBAL, 1_000), BUCKET).limit().quota()).isEqualTo(333);
        shares.apply(key, 1_000, Map.of("us-east-1", 900L));
        shares.apply(key, 0, null);
        assertThat(shares.ruleFor(rule(Scope.GLOBAL, 1_000), BUCKET).limit().quota()).isEqualTo(333);
        assertThat(shares.moved()).isZero();
    }

    @Test
    void oneRegionHoldsEveryLimitWhole() {
        Rule global = rule(Scope.GLOBAL, 1_000);
        assertThat(RegionShares.single("here").ruleFor(global, BUCKET)).isSameAs(global);
    }

    @Test
    void regionSettingsThatCannotWorkAreRefusedByName() {
        assertThatThrownBy(() -> new RegionShares("us-west-2", THREE))
                .hasMessageContaining("not this instance's region 'us-west-2'");
        Map<String, Double> zero = new LinkedHashMap<>(THREE);
        zero.put("eu-central-1", 0.0);
        assertThatThrownBy(() -> new RegionShares("us-east-1", zero))
                .hasMessageContaining("ratelimit.regions.weights.eu-central-1 must be a number above 0");
        assertThatThrownBy(() -> new RegionShares("us east", Map.of("us east", 1.0)))
                .isInstanceOf(InvalidLimitException.class);
    }

    @Test
    void sharesAreStaleUntilTheRebalancerIsHeardAndAgainWhenItFallsSilent() {
        RegionShares shares = new RegionShares("us-east-1", THREE);
        Instant now = Instant.parse("2026-12-02T00:00:00Z");
        assertThat(shares.stale(now, Duration.ofSeconds(30))).isTrue();
        shares.heard(now);
        assertThat(shares.stale(now.plusSeconds(30), Duration.ofSeconds(30))).isFalse();
        assertThat(shares.stale(now.plusSeconds(31), Duration.ofSeconds(30))).isTrue();
    }

    @Test
    void theEvaluatorChecksAGlobalRuleOnItsRegionsShareAndChargesTheRulesCost() {
        RegionShares shares = new RegionShares("us-east-1", THREE);
        Rule global = new Rule("api", "api", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("t.", 30, 30, Duration.ofMinutes(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 1, null, Scope.GLOBAL);
        RuleSet rules = RuleSet.builder("free").rule(global).build();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, new LocalBucketStore(1_000),
                ClientIds.unkeyed(), shares);
        RequestAttributes request = new RequestAttributes("acme", null, null, "10.0.0.1", "api", "/x", "default",
                "free", 1);
        int admitted = 0;
        for (int i = 0; i < 30; i++) {
            Verdict verdict = evaluator.check(request, new RequestPermits()).block();
            admitted += verdict.allowed() ? 1 : 0;
            assertThat(verdict.outcomes().get(0).rule().limit().quota()).isEqualTo(10);
        }
        assertThat(admitted).as("a third of 30 in this region").isEqualTo(10);
        assertThat(evaluator.region()).isEqualTo("us-east-1");
        assertThat(new RateLimitEvaluator(() -> rules, new LocalBucketStore(10), ClientIds.unkeyed()).region())
                .isNull();
    }

    @Test
    void aGlobalRuleCannotCapRequestsInProgressNorBeSharded() {
        assertThatThrownBy(() -> new Rule("c", "c", Match.ANY, List.of(Dimension.API_KEY),
                ConcurrencyLimit.of("c.", 5, Duration.ofSeconds(30)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 1, null, Scope.GLOBAL)).hasMessageContaining("Use scope regional");
        assertThatThrownBy(() -> new Rule("s", "s", Match.ANY, List.of(Dimension.TENANT),
                TokenBucketLimit.of("s.", 1_000, 1_000, Duration.ofMinutes(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 4, null, Scope.GLOBAL)).hasMessageContaining("split between regions already");
        Rule global = rule(Scope.GLOBAL, 1_000);
        assertThat(global.withLimit(global.limit().scaled(0.5)).scope()).isEqualTo(Scope.GLOBAL);
        assertThat(new Rule("r", "r", Match.ANY, List.of(Dimension.API_KEY), global.limit(), 0, Mode.ENFORCE,
                FailureMode.LOCAL, StoreMode.EXACT, 1, null, null).scope()).isEqualTo(Scope.REGIONAL);
    }

    static Rule rule(Scope scope, long quota) {
        return new Rule("api", "api", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("t.", quota, quota, Duration.ofMinutes(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 1, null, scope);
    }
}

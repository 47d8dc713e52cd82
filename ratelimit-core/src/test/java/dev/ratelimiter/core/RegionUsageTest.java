package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The usage a region reports per global bucket: tokens admitted and refused, reset each interval. */
class RegionUsageTest {

    static final Rule GLOBAL = RegionSharesTest.rule(Scope.GLOBAL, 1_000);
    static final Rule REGIONAL = new Rule("other", "other", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("t.", 10, 10, Duration.ofMinutes(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
    static final RuleSet RULES = RuleSet.builder("free").rule(GLOBAL).rule(REGIONAL).build();
    static final RegionShares SHARES = new RegionShares("us-east-1", RegionSharesTest.THREE);
    static final RequestAttributes REQUEST = new RequestAttributes("acme", null, null, null, "api", "/x", "default",
            "free", 1);

    @Test
    void admittedAndRefusedTokensOfGlobalBucketsAreCountedAndResetEachInterval() {
        RegionUsage usage = new RegionUsage(() -> RULES, SHARES, 100);
        usage.onVerdict(REQUEST, verdict(outcome(GLOBAL, "a", 3, true)));
        usage.onVerdict(REQUEST, verdict(outcome(GLOBAL, "a", 2, false)));
        usage.onVerdict(REQUEST, verdict(outcome(GLOBAL, "b", 1, true), outcome(REGIONAL, "b", 1, true)));
        List<RegionUsage.Report> reports = usage.drain(1_000);
        assertThat(reports).extracting(RegionUsage.Report::key, RegionUsage.Report::admitted,
                RegionUsage.Report::refused).containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple(key("a"), 3L, 2L),
                        org.assertj.core.groups.Tuple.tuple(key("b"), 1L, 0L));
        assertThat(reports).allSatisfy(report -> {
            assertThat(report.quota()).as("the whole limit, not the share").isEqualTo(1_000);
            assertThat(report.windowMillis()).isEqualTo(60_000);
            assertThat(report.rule()).isEqualTo("api");
        });
        usage.onVerdict(REQUEST, verdict(outcome(GLOBAL, "a", 1, true)));
        assertThat(usage.drain(1_000)).extracting(RegionUsage.Report::key, RegionUsage.Report::admitted)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(key("a"), 1L),
                        org.assertj.core.groups.Tuple.tuple(key("b"), 0L));
    }

    @Test
    void aRequestRefusedByAnotherRuleTookNothingFromTheGlobalOne() {
        RegionUsage usage = new RegionUsage(() -> RULES, SHARES, 100);
        usage.onVerdict(REQUEST, verdict(outcome(GLOBAL, "a", 1, true), outcome(REGIONAL, "a", 1, false)));
        assertThat(usage.drain(1_000)).isEmpty();
    }

    @Test
    void anIdleBucketIsReportedOnceWithZerosThenForgotten() {
        RegionUsage usage = new RegionUsage(() -> RULES, SHARES, 100);
        usage.onVerdict(REQUEST, verdict(outcome(GLOBAL, "a", 1, true)));
        assertThat(usage.drain(1_000)).hasSize(1);
        assertThat(usage.drain(1_000)).singleElement().satisfies(report -> {
            assertThat(report.admitted()).isZero();
            assertThat(report.refused()).isZero();
        });
        assertThat(usage.drain(1_000)).isEmpty();
        assertThat(usage.keys()).isZero();
    }

    @Test
    void rotatingKeysFillTheCountOnlyUpToItsBound() {
        RegionUsage usage = new RegionUsage(() -> RULES, SHARES, 50);
        for (int i = 0; i < 500; i++) {
            usage.onVerdict(REQUEST, verdict(outcome(GLOBAL, "k" + i, 1, true)));
        }
        assertThat(usage.keys()).isEqualTo(50);
        assertThat(usage.overflow()).isEqualTo(450);
        assertThat(usage.drain(1_000)).hasSize(50);
    }

    @Test
    void aQuietBucketOnItsDefaultShareIsReportedOnceThenNotUntilItNeedsMore() {
        RegionUsage usage = new RegionUsage(() -> RULES, SHARES, 100);
        Rule share = SHARES.ruleFor(GLOBAL, bucket("q"));
        assertThat(share.limit().quota()).isEqualTo(333);
        // 333 a minute is 5.55 a second: 2 in a second is less than half of it.
        usage.onVerdict(REQUEST, verdict(outcome(share, "q", 2, true)));
        assertThat(usage.drain(1_000)).as("the first report says it is quiet").hasSize(1);
        usage.onVerdict(REQUEST, verdict(outcome(share, "q", 2, true)));
        assertThat(usage.drain(1_000)).as("then nothing while it stays quiet").isEmpty();
        usage.onVerdict(REQUEST, verdict(outcome(share, "q", 1, false)));
        assertThat(usage.drain(1_000)).as("a refusal is reported").singleElement()
                .satisfies(report -> assertThat(report.refused()).isEqualTo(1));
        usage.onVerdict(REQUEST, verdict(outcome(share, "q", 4, true)));
        assertThat(usage.drain(1_000)).as("more than half its share is reported").hasSize(1);
    }

    @Test
    void quietIsJudgedAgainstThisInstancesPartOfTheShareAndSaidAgainEveryFewIntervals() {
        RegionUsage usage = new RegionUsage(() -> RULES, SHARES, () -> 4, 100);
        Rule share = SHARES.ruleFor(GLOBAL, bucket("q"));
        // 2 a second is under half of 333 a minute, but not under half of a quarter of it (4 instances share it).
        usage.onVerdict(REQUEST, verdict(outcome(share, "q", 2, true)));
        assertThat(usage.drain(1_000)).singleElement().satisfies(report -> assertThat(report.quiet()).isFalse());
        RegionUsage one = new RegionUsage(() -> RULES, SHARES, () -> 1, 100);
        int reported = 0;
        for (int interval = 0; interval <= 2 * RegionUsage.QUIET_RESEND; interval++) {
            one.onVerdict(REQUEST, verdict(outcome(share, "q", 1, true)));
            reported += one.drain(1_000).size();
        }
        assertThat(reported).as("once, then every %d intervals", RegionUsage.QUIET_RESEND).isEqualTo(3);
    }

    @Test
    void anInstanceLeavingReportsZerosForEveryBucket() {
        RegionUsage usage = new RegionUsage(() -> RULES, SHARES, 100);
        usage.onVerdict(REQUEST, verdict(outcome(GLOBAL, "a", 3, true)));
        usage.onVerdict(REQUEST, verdict(outcome(GLOBAL, "b", 3, false)));
        assertThat(usage.farewell()).hasSize(2).allSatisfy(report -> {
            assertThat(report.admitted()).isZero();
            assertThat(report.refused()).isZero();
        });
        assertThat(usage.keys()).isZero();
    }

    @Test
    void aRuleNoLongerGlobalIsNotReported() {
        RegionUsage usage = new RegionUsage(() -> RuleSet.builder("free").rule(REGIONAL).build(), SHARES, 100);
        usage.onVerdict(REQUEST, verdict(outcome(GLOBAL, "a", 1, true)));
        assertThat(usage.drain(1_000)).isEmpty();
        assertThat(usage.keys()).isZero();
    }

    private static String key(String partition) {
        return RegionShares.shareKey(bucket(partition));
    }

    private static BucketKey bucket(String partition) {
        return new BucketKey(partition, "api@t");
    }

    private static RuleOutcome outcome(Rule rule, String partition, int cost, boolean allowed) {
        return new RuleOutcome(new Check(rule, bucket(partition), cost, false), allowed, 0, Duration.ZERO,
                Duration.ZERO);
    }

    private static Verdict verdict(RuleOutcome... outcomes) {
        return Verdict.evaluated(List.of(outcomes), Verdict.Source.STORE);
    }
}

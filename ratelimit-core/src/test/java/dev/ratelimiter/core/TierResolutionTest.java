package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request's tier is resolved once, in the rule set it is then decided by: a rule change swapped in between the two
 * cannot pair one set's tier with another set's rules.
 */
class TierResolutionTest {

    @Test
    void theTierAndTheRulesComeFromTheOneRuleSetTheRequestWasResolvedIn() {
        RuleSet before = RuleSet.builder("free").apiKey("acme-key", "pro")
                .rule(tierDefault("free", 100)).rule(tierDefault("pro", 1)).build();
        // The change that lands mid-request: acme moves to free, and the kill switch is thrown.
        RuleSet after = RuleSet.builder("free").apiKey("acme-key", "free").killSwitch(true)
                .rule(tierDefault("free", 100)).rule(tierDefault("pro", 1)).build();
        RuleSetHolder holder = new RuleSetHolder(before);
        RateLimitEvaluator evaluator = new RateLimitEvaluator(holder, new LocalBucketStore(1000), ClientIds.unkeyed());

        RuleSet snapshot = evaluator.rules();
        String tier = snapshot.tierFor("acme-key");
        holder.replace(after);
        Verdict verdict = evaluator.check(snapshot, request("acme-key", tier), new RequestPermits())
                .block(Duration.ofSeconds(5));

        assertThat(tier).isEqualTo("pro");
        assertThat(verdict.reason()).as("not the later set's kill switch").isNotEqualTo(Verdict.Reason.KILL_SWITCH);
        assertThat(verdict.outcomes()).extracting(RuleOutcome::rule).extracting(Rule::id)
                .containsExactly("pro.default");
        assertThat(evaluator.check(request("acme-key", tier), new RequestPermits()).block(Duration.ofSeconds(5))
                .reason()).as("the set in force now, for a caller without a snapshot")
                .isEqualTo(Verdict.Reason.KILL_SWITCH);
    }

    @Test
    void anUnknownKeyIsTheUnknownKeysTierUnderAPolicyOfItsOwnAndTheDefaultTierOtherwise() {
        Rule perAddress = new Rule(RuleSet.UNKNOWN_KEYS, RuleSet.UNKNOWN_KEYS, new Match(Set.of(), List.of(), Set.of(),
                Set.of(RuleSet.UNKNOWN_KEYS), Set.of()), List.of(Dimension.CLIENT_IP),
                TokenBucketLimit.of("unknown.", 5, 5, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        RuleSet perAddressPolicy = RuleSet.builder("free").apiKey("acme-key", "pro")
                .unknownApiKeys(UnknownApiKeyPolicy.PER_ADDRESS, perAddress).build();
        RuleSet rejectPolicy = RuleSet.builder("free").apiKey("acme-key", "pro")
                .unknownApiKeys(UnknownApiKeyPolicy.REJECT, null).build();
        RuleSet defaultPolicy = RuleSet.builder("free").apiKey("acme-key", "pro").build();

        assertThat(perAddressPolicy.tierFor("made-up")).isEqualTo(RuleSet.UNKNOWN_KEYS);
        assertThat(rejectPolicy.tierFor("made-up")).isEqualTo(RuleSet.UNKNOWN_KEYS);
        assertThat(defaultPolicy.tierFor("made-up")).isEqualTo("free");
        assertThat(perAddressPolicy.tierFor("acme-key")).isEqualTo("pro");
        assertThat(perAddressPolicy.tierFor(null)).as("no key at all").isEqualTo("free");
        assertThat(RuleSet.builder("free").unknownApiKeys(UnknownApiKeyPolicy.REJECT, null).killSwitch(true).build()
                .tierFor("made-up")).as("under the kill switch").isEqualTo("free");
    }

    @Test
    void aTrustedTierThisRuleSetKnowsWinsAndAnyOtherFallsBackToTheKeysTier() {
        RuleSet rules = RuleSet.builder("free").apiKey("acme-key", "pro").enforce("trial", true)
                .unknownApiKeys(UnknownApiKeyPolicy.REJECT, null)
                .rule(tierDefault("free", 100)).rule(tierDefault("enterprise", 1000)).build();

        assertThat(rules.tierFor("acme-key", "enterprise")).as("a tier only a rule names").isEqualTo("enterprise");
        assertThat(rules.tierFor("made-up", "trial")).as("vouched for, so not an unknown key").isEqualTo("trial");
        assertThat(rules.tierFor("acme-key", "platinum")).as("a tier nobody configured").isEqualTo("pro");
        assertThat(rules.tierFor("made-up", "platinum")).isEqualTo(RuleSet.UNKNOWN_KEYS);
        assertThat(rules.tierFor("acme-key", RuleSet.UNKNOWN_KEYS)).as("the reserved name is no tier")
                .isEqualTo("pro");
        assertThat(rules.tierFor(null, null)).isEqualTo("free");
        assertThat(rules.knowsTier("free")).isTrue();
        assertThat(rules.knowsTier("platinum")).isFalse();
    }

    @Test
    void aCustomerOverrideStillAppliesToACallerWithATrustedTier() {
        Rule override = new Rule("acme-override", "tier-default", new Match(Set.of(), List.of(), Set.of(), Set.of(),
                Set.of("acme-key")), List.of(Dimension.API_KEY), TokenBucketLimit.of("acme.", 5, 5,
                        Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        RuleSet rules = RuleSet.builder("free").rule(tierDefault("free", 100)).rule(tierDefault("pro", 1000))
                .rule(override).build();

        String tier = rules.tierFor("acme-key", "pro");
        assertThat(tier).isEqualTo("pro");
        assertThat(rules.applicableTo(request("acme-key", tier))).extracting(Rule::id)
                .containsExactly("acme-override");
        assertThat(rules.applicableTo(request("other-key", tier))).extracting(Rule::id).containsExactly("pro.default");
    }

    private static Rule tierDefault(String tier, long capacity) {
        return new Rule(tier + ".default", "tier-default", new Match(Set.of(), List.of(), Set.of(), Set.of(tier),
                Set.of()), List.of(Dimension.API_KEY), TokenBucketLimit.of(tier + ".", capacity, capacity,
                        Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
    }

    private static RequestAttributes request(String apiKey, String tier) {
        return new RequestAttributes(apiKey, null, null, "10.0.0.1", "api", "/api/x", "default", tier, 1);
    }
}

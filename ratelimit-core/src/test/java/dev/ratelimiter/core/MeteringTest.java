package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A cost measured from the request or the response: the clamp, the rules' checks, and the evaluator asking each rule's
 * cost of the request's {@link RuleCosts} (a rule charged from the response spends its minimum up front).
 */
class MeteringTest {

    private static final TokenBucketLimit BUCKET = TokenBucketLimit.of("t", 100, 10, Duration.ofSeconds(1));

    @Test
    void aValueIsRoundedUpAndClampedAndWhatIsNoCostCostsTheFallback() {
        Metering metering = Metering.fromRequest("x", 50, 3);
        assertThat(metering.clamp(7)).isEqualTo(7);
        assertThat(metering.clamp(2.1)).isEqualTo(3);
        assertThat(metering.clamp(0)).isEqualTo(1);
        assertThat(metering.clamp(0.0001)).isEqualTo(1);
        assertThat(metering.clamp(51)).isEqualTo(50);
        assertThat(metering.clamp(Double.POSITIVE_INFINITY)).isEqualTo(50);
        assertThat(metering.clamp(Long.MAX_VALUE)).isEqualTo(50);
        assertThat(metering.clamp(null)).isEqualTo(3);
        assertThat(metering.clamp(-1)).isEqualTo(3);
        assertThat(metering.clamp(Double.NaN)).isEqualTo(3);
    }

    @Test
    void theEvaluatorTakesEachRulesCostFromTheRequestsCosts() {
        Rule batch = rule("batch", Metering.fromRequest("headers['n']", 50, 1));
        Rule llm = rule("llm", Metering.fromResponse(new ResponseCharge(null, "usage.total_tokens", 20)));
        Rule fixed = rule("fixed", null);
        List<Check> checked = new ArrayList<>();
        RateLimitStore store = checks -> {
            checked.addAll(checks);
            return Mono.just(Verdict.unlimited(Verdict.Reason.NO_RULE));
        };
        RuleSet rules = RuleSet.builder("free").rule(batch).rule(llm).rule(fixed).build();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, store, ClientIds.unkeyed());
        RequestAttributes request = new RequestAttributes("key", null, null, null, "api", "/x", "default", "free", 2);
        evaluator.check(rules, request, new RequestPermits(),
                (rule, standard) -> rule.id().equals("batch") ? 42 : standard).block(Duration.ofSeconds(5));
        assertThat(checked).extracting(check -> check.rule().id() + "=" + check.cost())
                .containsExactlyInAnyOrder("batch=42", "llm=20", "fixed=2");
    }

    @Test
    void whatCannotBeMeteredIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> rule("r", new Metering("x", 10, 1, new ResponseCharge("X-U", null, 1))))
                .hasMessageContaining("has both a cost-expression and charge-from-response");
        assertThatThrownBy(() -> rule("r", Metering.fromRequest("x", 10, 11)))
                .hasMessageContaining("fallback-cost must be between 1 and max-cost 10");
        assertThatThrownBy(() -> rule("r", Metering.fromResponse(new ResponseCharge(null, "a.b.c.d.e.f.g.h.i.j.k.l.m"
                + ".n.o.p.q", 1)))).hasMessageContaining("17 members deep");
        assertThatThrownBy(() -> new Rule("c", "c", Match.ANY, List.of(Dimension.API_KEY),
                ConcurrencyLimit.of("c", 5, Duration.ofSeconds(30)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 1, null, Scope.REGIONAL, Metering.fromResponse(new ResponseCharge("X-U", null, 1))))
                .hasMessageContaining("caps requests in progress");
    }

    private static Rule rule(String id, Metering metering) {
        return new Rule(id, id, Match.ANY, List.of(Dimension.API_KEY), BUCKET, 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 1, null, Scope.REGIONAL, metering);
    }
}

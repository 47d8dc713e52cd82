package dev.ratelimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Decision events show the factor an abuse score scaled the client's limits by, and only then. */
class AbuseFactorEventTest {

    static final Instant NOW = Instant.parse("2026-12-05T00:00:00Z");
    final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
    final ClientIds ids = ClientIds.unkeyed();
    final AbuseScores scores = new AbuseScores(new AbuseScores.Settings(0.1, Duration.ofMinutes(10), 10, Set.of(),
            Set.of("internal")), clock);
    final Rule perKey = new Rule("per-key", "g", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("t.", 100, 100, Duration.ofMinutes(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
    final List<DecisionEvent> events = new ArrayList<>();
    final DecisionEvents decisionEvents = new DecisionEvents(new EventQueue(10, List.of(events::addAll)), clock, "i",
            null, ids, scores);

    @Test
    void aScaledClientsEventCarriesItsFactorInHundredths() {
        scores.apply(ids.of("k"), new AbuseScore(null, 0.3333, "op", NOW, null));
        DecisionEvent event = decisionEvents.of(request("k", "free"), verdict());
        assertThat(event.abuseFactor()).isCloseTo(0.3333, org.assertj.core.api.Assertions.within(1e-9));
        assertThat(DecisionEventJson.write(event)).endsWith(",\"abuseFactor\":0.33}");
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> RuleSet.builder("free").rule(perKey).build(),
                new LocalBucketStore(10), ids, null, scores);
        Verdict checked = evaluator.check(request("k", "free"), new RequestPermits()).block();
        assertThat(checked.outcomes().get(0).rule().limit().quota()).as("the same hundredths as the event")
                .isEqualTo(33);
    }

    @Test
    void aWholeOrExemptClientsEventHasNoFactor() {
        assertThat(decisionEvents.of(request("k", "free"), verdict()).abuseFactor()).isNull();
        scores.apply(ids.of("k"), new AbuseScore(1.0, null, "op", NOW, null));
        DecisionEvent exempt = decisionEvents.of(request("k", "internal"), verdict());
        assertThat(exempt.abuseFactor()).isNull();
        assertThat(DecisionEventJson.write(exempt)).doesNotContain("abuseFactor");
    }

    RequestAttributes request(String key, String tier) {
        return new RequestAttributes(key, null, null, null, "api", "/x", "default", tier, 1);
    }

    Verdict verdict() {
        return Verdict.evaluated(List.of(new RuleOutcome(new Check(perKey, new BucketKey("p", "per-key@t"), 1, false),
                true, 10, Duration.ZERO, Duration.ZERO)), Verdict.Source.STORE);
    }
}

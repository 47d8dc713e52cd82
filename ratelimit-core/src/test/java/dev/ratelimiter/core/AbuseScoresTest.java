package dev.ratelimiter.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class AbuseScoresTest {

    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    static final Duration HALF_LIFE = Duration.ofMinutes(10);

    final AtomicLong millis = new AtomicLong(T0.toEpochMilli());
    final Clock clock = new Clock() {
        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis.get());
        }
    };

    AbuseScores scores(double minFactor, int maxClients) {
        return new AbuseScores(new AbuseScores.Settings(minFactor, HALF_LIFE, maxClients, Set.of("exempt-rule"),
                Set.of("internal")), clock);
    }

    static AbuseScore score(double score, Instant at) {
        return new AbuseScore(score, null, "test", at, null);
    }

    @Test
    void aScoreMapsLinearlyBetweenWholeAndTheFloor() {
        AbuseScores scores = scores(0.1, 10);
        assertThat(scores.factorOf(score(0, T0))).isEqualTo(1.0);
        assertThat(scores.factorOf(score(1, T0))).isEqualTo(0.1);
        assertThat(scores.factorOf(score(0.5, T0))).isCloseTo(0.55, within(1e-9));
        assertThat(scores.factorOf(new AbuseScore(null, 0.01, "op", T0, null))).as("a factor below the floor")
                .isEqualTo(0.1);
    }

    @Test
    void theLoweringHalvesEveryHalfLifeAndIsForgottenOnceNegligible() {
        AbuseScores scores = scores(0.1, 10);
        scores.apply("c", score(1, T0));
        assertThat(scores.factorFor("c")).isCloseTo(0.1, within(1e-9));
        millis.addAndGet(HALF_LIFE.toMillis());
        assertThat(scores.factorFor("c")).isCloseTo(0.55, within(1e-9));
        millis.addAndGet(HALF_LIFE.toMillis());
        assertThat(scores.factorFor("c")).isCloseTo(0.775, within(1e-9));
        millis.addAndGet(HALF_LIFE.toMillis() * 8); // 0.9 / 1024 < 0.005
        assertThat(scores.factorFor("c")).isEqualTo(1.0);
        assertThat(scores.scaledClients()).isZero();
        assertThat(scores.factorFor("someone-else")).isEqualTo(1.0);
    }

    @Test
    void anExpiredScoreNoLongerApplies() {
        AbuseScores scores = scores(0.1, 10);
        scores.apply("c", new AbuseScore(null, 0.2, "op", T0, T0.plusSeconds(60)));
        assertThat(scores.factorFor("c")).isLessThan(0.21);
        millis.addAndGet(60_000);
        assertThat(scores.factorFor("c")).isEqualTo(1.0);
        assertThat(scores.viewOf("c")).isNull();
    }

    @Test
    void aScoreFromTheFutureDecaysFromNowNotFromItsStamp() {
        AbuseScores scores = scores(0.1, 10);
        scores.apply("c", score(1, T0.plus(Duration.ofDays(365))));
        millis.addAndGet(HALF_LIFE.toMillis());
        assertThat(scores.factorFor("c")).isCloseTo(0.55, within(1e-9));
    }

    @Test
    void pastMaxClientsTheEldestScoreIsForgotten() {
        AbuseScores scores = scores(0.1, 3);
        for (String client : List.of("a", "b", "c")) {
            scores.apply(client, score(1, T0));
        }
        scores.apply("a", score(1, T0)); // a arrives again: b is now the eldest
        scores.apply("d", score(1, T0));
        assertThat(scores.held()).isEqualTo(3);
        assertThat(scores.factorFor("b")).isEqualTo(1.0);
        assertThat(List.of("a", "c", "d")).allSatisfy(client -> assertThat(scores.factorFor(client)).isLessThan(1));
        assertThat(scores.views(10)).extracting(AbuseScores.View::client).containsExactly("d", "a", "c");
    }

    @Test
    void removingAScoreMakesTheLimitsWhole() {
        AbuseScores scores = scores(0.1, 3);
        scores.apply("a", score(1, T0));
        scores.remove("a");
        assertThat(scores.factorFor("a")).isEqualTo(1.0);
        assertThat(scores.held()).isZero();
    }

    @Test
    void malformedScoresAreRefusedWhole() {
        assertThatThrownBy(() -> score(Double.NaN, T0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> score(-0.1, T0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> score(1e300, T0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AbuseScore(null, 2.0, "x", T0, null)).hasMessageContaining("only lower");
        assertThatThrownBy(() -> new AbuseScore(null, 0.0, "x", T0, null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AbuseScore(null, null, "x", T0, null)).hasMessageContaining("neither");
        assertThatThrownBy(() -> score(0.5, null)).hasMessageContaining("time");
        assertThatThrownBy(() -> new AbuseScores.Settings(0, HALF_LIFE, 1, null, null))
                .hasMessageContaining("ratelimit.abuse.min-factor");
        assertThatThrownBy(() -> new AbuseScores.Settings(0.5, Duration.ZERO, 1, null, null))
                .hasMessageContaining("ratelimit.abuse.half-life");
    }

    @Test
    void onlyRulesPerApiKeyOfNonExemptTiersAndRulesAreScaled() {
        AbuseScores scores = scores(0.1, 3);
        Limit limit = TokenBucketLimit.of("t.", 10, 10, Duration.ofSeconds(1));
        Rule perKey = new Rule("per-key", "g", Match.ANY, List.of(Dimension.API_KEY), limit, 0, Mode.ENFORCE,
                FailureMode.LOCAL);
        Rule perIp = new Rule("per-ip", "g", Match.ANY, List.of(Dimension.CLIENT_IP), limit, 0, Mode.ENFORCE,
                FailureMode.LOCAL);
        Rule exempt = new Rule("exempt-rule", "g", Match.ANY, List.of(Dimension.API_KEY), limit, 0, Mode.ENFORCE,
                FailureMode.LOCAL);
        Rule concurrency = new Rule("cc", "g", Match.ANY, List.of(Dimension.API_KEY),
                ConcurrencyLimit.of("c.", 5, Duration.ofSeconds(30)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        assertThat(scores.scales(perKey, "free")).isTrue();
        assertThat(scores.scales(perKey, "internal")).isFalse();
        assertThat(scores.scales(perIp, "free")).isFalse();
        assertThat(scores.scales(exempt, "free")).isFalse();
        assertThat(scores.scales(concurrency, "free")).isFalse();
    }

    /** Whatever the score, the floor and the time: the factor is within [minFactor, 1] and never falls with time. */
    @TestFactory
    Stream<DynamicTest> theFactorIsBoundedAndOnlyRisesWithTime() {
        Gen<double[]> cases = Gen.zip(Gen.doubles(0, 1), Gen.doubles(0.01, 1), Gen.longs(0, 10 * HALF_LIFE.toMillis()),
                (score, floor, elapsed) -> new double[] { score, floor, elapsed });
        return Property.forAll(cases).check(values -> {
            millis.set(T0.toEpochMilli());
            AbuseScores scores = scores(values[1], 10);
            scores.apply("c", score(values[0], T0));
            double before = scores.factorFor("c");
            assertThat(before).isBetween(values[1], 1.0);
            double lowering = values[0] * (1 - values[1]);
            assertThat(before).isCloseTo(lowering < AbuseScores.NEGLIGIBLE ? 1 : 1 - lowering, within(1e-9));
            millis.addAndGet((long) values[2]);
            double after = scores.factorFor("c");
            assertThat(after).isBetween(before, 1.0);
        });
    }

    /** The evaluator: the scored client's bucket holds its factor of the limit, the other client's the whole. */
    @Test
    void aScoredClientIsRefusedSoonerThanAWellBehavedOneOfTheSameTier() {
        AbuseScores scores = scores(0.1, 10);
        ClientIds ids = ClientIds.unkeyed();
        scores.apply(ids.of("abusive"), score(1, T0));
        Rule perKey = new Rule("per-key", "g", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("t.", 100, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> RuleSet.builder("free").rule(perKey).build(),
                new LocalBucketStore(100), ids, null, scores);
        assertThat(admitted(evaluator, "abusive", 200)).isEqualTo(10);
        assertThat(admitted(evaluator, "normal", 200)).isEqualTo(100);
    }

    @Test
    void aLoweredCapacityCapsTheTokensAlreadyInTheBucketAndComesBackWithDecay() {
        AbuseScores scores = scores(0.1, 10);
        ClientIds ids = ClientIds.unkeyed();
        Rule perKey = new Rule("per-key", "g", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("t.", 100, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, FailureMode.LOCAL);
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> RuleSet.builder("free").rule(perKey).build(),
                new LocalBucketStore(100), ids, null, scores);
        assertThat(admitted(evaluator, "abusive", 1)).as("a full bucket of 100").isEqualTo(1);
        scores.apply(ids.of("abusive"), score(1, T0));
        assertThat(admitted(evaluator, "abusive", 200)).as("99 tokens held, capped at the lowered 10").isEqualTo(10);
        scores.remove(ids.of("abusive"));
        assertThat(admitted(evaluator, "abusive", 200)).as("the bucket was drained; whole again it refills at "
                + "the whole rate, not at once").isLessThanOrEqualTo(1);
    }

    /** The factor applies to the rule in force: a shard's split, a region's share, each scaled in turn. */
    @Test
    void theFactorScalesAShardsSplitAndARegionsShare() {
        AbuseScores scores = scores(0.1, 10);
        ClientIds ids = ClientIds.unkeyed();
        scores.apply(ids.of("k"), score(1, T0));
        List<Check> seen = new java.util.ArrayList<>();
        RateLimitStore recording = checks -> {
            seen.addAll(checks);
            return reactor.core.publisher.Mono.just(Verdict.evaluated(List.of(), Verdict.Source.STORE));
        };
        Rule sharded = new Rule("sharded", "s", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("t.", 1_600, 1_600, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 16);
        Rule global = new Rule("global", "g", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("t.", 900, 900, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
                StoreMode.EXACT, 1, null, Scope.GLOBAL);
        RegionShares regions = new RegionShares("a", java.util.Map.of("a", 1.0, "b", 1.0, "c", 1.0));
        regions.sharesRead();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> RuleSet.builder("free").rule(sharded).rule(global)
                .build(), recording, ids, regions, scores);
        evaluator.check(new RequestAttributes("k", null, null, null, "api", "/x", "default", "free", 1),
                new RequestPermits()).block();
        evaluator.check(new RequestAttributes("other", null, null, null, "api", "/x", "default", "free", 1),
                new RequestPermits()).block();
        assertThat(seen).extracting(check -> check.rule().id() + "=" + check.rule().limit().quota())
                .containsExactlyInAnyOrder("sharded=10", "global=30", "sharded=100", "global=300");
    }

    static int admitted(RateLimitEvaluator evaluator, String key, int requests) {
        int admitted = 0;
        for (int i = 0; i < requests; i++) {
            Verdict verdict = evaluator.check(new RequestAttributes(key, null, null, null, "api", "/x", "default",
                    "free", 1), new RequestPermits()).block();
            admitted += verdict.allowed() ? 1 : 0;
        }
        return admitted;
    }
}

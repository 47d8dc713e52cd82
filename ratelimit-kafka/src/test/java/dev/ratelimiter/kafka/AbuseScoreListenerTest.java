package dev.ratelimiter.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Random;
import java.util.Set;

import dev.ratelimiter.core.AbuseScore;
import dev.ratelimiter.core.AbuseScores;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Records of the abuse-score topic as an instance applies them: good ones lower the client's limits, a tombstone
 * makes them whole, and nothing a record says — junk bytes, NaN, negative or huge numbers, missing fields, a factor
 * above 1 — raises a limit or stops the records after it.
 */
class AbuseScoreListenerTest {

    static final Instant NOW = Instant.parse("2026-12-05T00:00:00Z");

    final AbuseScores scores = new AbuseScores(new AbuseScores.Settings(0.1, Duration.ofMinutes(10), 1_000, Set.of(),
            Set.of()), Clock.fixed(NOW, ZoneOffset.UTC));
    final AbuseScoreListener listener = new AbuseScoreListener(() -> new MockConsumer<>("earliest"), "scores", scores);

    @Test
    void aScoreLowersTheClientsFactorAndATombstoneRestoresIt() {
        listener.apply("client-a", "{\"score\":1,\"source\":\"rollup\",\"at\":" + NOW.toEpochMilli() + "}", NOW);
        assertThat(scores.factorFor("client-a")).isCloseTo(0.1, within(1e-9));
        assertThat(scores.viewOf("client-a").source()).isEqualTo("rollup");
        listener.apply("client-a", null, NOW);
        assertThat(scores.factorFor("client-a")).isEqualTo(1.0);
        assertThat(listener.applied()).isEqualTo(2);
    }

    @Test
    void aRecordWithoutItsTimeDecaysFromWhenItWasWritten() {
        listener.apply("client-a", "{\"factor\":0.2}", NOW.minus(Duration.ofMinutes(10)));
        assertThat(scores.factorFor("client-a")).as("one half-life old: 0.8 lowering halved").isCloseTo(0.6,
                within(1e-9));
    }

    @Test
    void malformedRecordsAreSkippedAndNeverRaiseALimit() {
        listener.apply("held", "{\"score\":0.5,\"at\":\"" + NOW + "\"}", NOW);
        double held = scores.factorFor("held");
        List<String> malformed = List.of("", "not json", "[]", "42", "null", "{}", "{\"score\":\"high\"}",
                "{\"score\":-1}", "{\"score\":1.5}", "{\"score\":1e309}", "{\"score\":NaN}", "{\"factor\":2}",
                "{\"factor\":0}", "{\"factor\":-0.5}", "{\"score\":0.5,\"at\":\"yesterday\"}",
                "{\"score\":0.5,\"at\":99999999999999999999999}", "{\"score\":0.5,\"source\":{}}",
                "{\"score\":0.5,\"expires\":true}");
        for (String value : malformed) {
            listener.apply("held", value, NOW);
        }
        listener.apply(null, "{\"score\":1}", NOW);
        listener.apply("", "{\"score\":1}", NOW);
        assertThat(listener.skipped()).isEqualTo(malformed.size() + 2);
        assertThat(scores.factorFor("held")).as("the score in force stays").isEqualTo(held);
        listener.apply("next", "{\"score\":1}", NOW);
        assertThat(scores.factorFor("next")).as("the records after still apply").isCloseTo(0.1, within(1e-9));
    }

    @Test
    void randomBytesNeverThrowNorRaiseAFactorAboveOne() {
        Random random = new Random(35);
        for (int i = 0; i < 5_000; i++) {
            byte[] bytes = new byte[random.nextInt(64)];
            random.nextBytes(bytes);
            String value = i % 2 == 0 ? new String(bytes, StandardCharsets.ISO_8859_1)
                    : "{\"score\":" + (random.nextGaussian() * Math.pow(10, random.nextInt(20))) + ",\"factor\":"
                            + random.nextGaussian() + "}";
            listener.apply("fuzzed-" + (i % 7), value, NOW);
        }
        for (int i = 0; i < 7; i++) {
            assertThat(scores.factorFor("fuzzed-" + i)).isBetween(0.1, 1.0);
        }
        assertThat(listener.applied() + listener.skipped()).isEqualTo(5_000);
    }

    @Test
    void aMissingTopicHoldsUpNothingAndIsReported() throws Exception {
        scores.apply("held", new AbuseScore(1.0, null, "rollup", NOW, null));
        AbuseScoreListener missing = new AbuseScoreListener(() -> new MockConsumer<>("earliest"), "no-such-topic",
                scores);
        missing.start();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!missing.topicMissing() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(missing.topicMissing()).isTrue();
            assertThat(missing.caughtUp()).isFalse();
            assertThat(scores.factorFor("held")).as("the scores held stay").isCloseTo(0.1, within(1e-9));
        }
        finally {
            missing.close();
        }
    }

    @Test
    void whatIsWrittenIsReadBack() {
        AbuseScore score = new AbuseScore(0.75, null, "operator", NOW, NOW.plusSeconds(60));
        assertThat(AbuseScoreJson.read(AbuseScoreJson.write(score), Instant.EPOCH)).isEqualTo(score);
    }
}

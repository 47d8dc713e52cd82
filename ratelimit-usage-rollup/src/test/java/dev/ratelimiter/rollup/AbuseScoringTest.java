package dev.ratelimiter.rollup;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The rollup's abuse scores: the formula of {@link AbuseScoring}, and the topology publishing them. */
class AbuseScoringTest {

    static final String SCORES = "ratelimit.abuse-scores";
    static final Instant T0 = Instant.parse("2026-12-05T10:00:00Z");
    static final AbuseScoring SCORING = new AbuseScoring(SCORES, Duration.ofMinutes(1), 20, 0.5, 0.9);

    @TempDir
    Path stateDir;

    TopologyTestDriver driver;
    TestInputTopic<String, byte[]> decisions;
    TestOutputTopic<String, String> scores;

    @BeforeEach
    void startDriver() {
        Properties properties = new RollupSettings("unused:9092", RollupTopology.DEFAULT_INPUT_TOPIC,
                RollupTopology.DEFAULT_OUTPUT_TOPIC, "scoring-test", stateDir.toString()).streamsProperties();
        properties.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        driver = new TopologyTestDriver(new RollupTopology(RollupTopology.DEFAULT_INPUT_TOPIC,
                RollupTopology.DEFAULT_OUTPUT_TOPIC, SCORING).build(), properties);
        decisions = driver.createInputTopic(RollupTopology.DEFAULT_INPUT_TOPIC, new StringSerializer(),
                new ByteArraySerializer());
        scores = driver.createOutputTopic(SCORES, new StringDeserializer(), new StringDeserializer());
    }

    @AfterEach
    void closeDriver() {
        driver.close();
    }

    static ClientConduct conduct(int allowed, int denied, long limit, double factor) {
        ClientConduct conduct = new ClientConduct();
        for (int i = 0; i < allowed; i++) {
            conduct.add(new DecisionEvent("c", "free", Verdict.ALLOWED, "r", limit, factor));
        }
        for (int i = 0; i < denied; i++) {
            conduct.add(new DecisionEvent("c", "free", Verdict.DENIED, "r", limit, factor));
        }
        return conduct;
    }

    @Test
    void theScoreRisesWithTheShareOfRequestsTheWholeLimitWouldRefuse() {
        assertThat(SCORING.score(conduct(100, 0, 100, 1))).isZero();
        assertThat(SCORING.score(conduct(50, 50, 10, 1))).as("excess 0.5: the lower bound").isZero();
        assertThat(SCORING.score(conduct(30, 70, 10, 1))).isCloseTo(0.5, within(1e-9));
        assertThat(SCORING.score(conduct(10, 90, 10, 1))).isCloseTo(1, within(1e-9));
        assertThat(SCORING.score(conduct(1, 9, 1, 1))).as("under the minimum of requests").isZero();
    }

    @Test
    void aClientThatSentLessThanOneLimitsWorthIsSpared() {
        assertThat(SCORING.score(conduct(10, 90, 400, 1))).as("100 requests of a 400 limit").isCloseTo(0.25,
                within(1e-9));
    }

    @Test
    void refusalsCausedByALoweredLimitDoNotKeepAClientLowered() {
        // A calm client (50 requests, well under its whole limit of 100) held to 0.1: 10 admitted, 40 refused.
        assertThat(SCORING.score(conduct(10, 40, 10, 0.1))).isZero();
        // The same lowered client still sending 500: its whole limit would refuse 80 %.
        assertThat(SCORING.score(conduct(10, 490, 10, 0.1))).isCloseTo(0.75, within(1e-9));
    }

    @Test
    void theAbusiveClientsScoreIsPublishedAndTheWellBehavedOnesIsNot() {
        Instant at = T0;
        for (int i = 0; i < 100; i++) {
            send("abusive", i < 10 ? "allowed" : "denied", at = at.plusMillis(100));
            send("normal", "allowed", at);
        }
        Map<String, JsonNode> latest = new LinkedHashMap<>();
        scores.readKeyValuesToList().forEach(kv -> latest.put(kv.key, Json.MAPPER.readTree(kv.value)));
        assertThat(latest).containsOnlyKeys("abusive");
        JsonNode score = latest.get("abusive");
        assertThat(score.get("score").asDouble()).isEqualTo(1.0);
        assertThat(score.get("source").asString()).isEqualTo("rollup");
        assertThat(score.get("at").asLong()).isEqualTo(T0.plus(Duration.ofMinutes(1)).toEpochMilli());
    }

    @Test
    void withoutAScoreTopicNothingIsScored() {
        assertThat(AbuseScoring.from(new Properties(), Map.of())).isNull();
        AbuseScoring scoring = AbuseScoring.from(new Properties(), Map.of("ABUSE_TOPIC", "t", "ABUSE_WINDOW",
                "PT30S"));
        assertThat(scoring.window()).isEqualTo(Duration.ofSeconds(30));
        assertThat(scoring.minRequests()).isEqualTo(20);
    }

    void send(String client, String verdict, Instant time) {
        Map<String, Object> event = new LinkedHashMap<>();
        event.put("schema", 1);
        event.put("time", time.toString());
        event.put("client", client);
        event.put("tier", "free");
        event.put("verdict", verdict);
        event.put("rule", "free.default");
        event.put("limit", 10);
        event.put("remaining", 0);
        decisions.pipeInput(client, Json.MAPPER.writeValueAsBytes(event), time);
    }
}

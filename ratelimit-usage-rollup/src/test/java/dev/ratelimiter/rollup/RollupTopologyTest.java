package dev.ratelimiter.rollup;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import static dev.ratelimiter.rollup.DecisionEvents.event;
import static dev.ratelimiter.rollup.DecisionEvents.raw;
import static org.assertj.core.api.Assertions.assertThat;

class RollupTopologyTest {

    private static final Instant HOUR_1 = Instant.parse("2026-11-30T22:00:00Z");

    private static final Instant HOUR_2 = Instant.parse("2026-11-30T23:00:00Z");

    private static final String NOISY = "noisy-client-0000000000";

    @TempDir
    Path stateDir;

    private TopologyTestDriver driver;

    private TestInputTopic<String, byte[]> decisions;

    private TestOutputTopic<String, String> rollups;

    @BeforeEach
    void startDriver() {
        Properties properties = new RollupSettings("unused:9092", RollupTopology.DEFAULT_INPUT_TOPIC,
                RollupTopology.DEFAULT_OUTPUT_TOPIC, "rollup-test", this.stateDir.toString()).streamsProperties();
        // Without the record cache every update is forwarded at once, as with a commit after every record.
        properties.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        this.driver = new TopologyTestDriver(
                new RollupTopology(RollupTopology.DEFAULT_INPUT_TOPIC, RollupTopology.DEFAULT_OUTPUT_TOPIC).build(),
                properties);
        this.decisions = this.driver.createInputTopic(RollupTopology.DEFAULT_INPUT_TOPIC, new StringSerializer(),
                new ByteArraySerializer());
        this.rollups = this.driver.createOutputTopic(RollupTopology.DEFAULT_OUTPUT_TOPIC, new StringDeserializer(),
                new StringDeserializer());
    }

    @AfterEach
    void closeDriver() {
        this.driver.close();
    }

    @Test
    void onlyTheDeniedClientIsRolledUpWithItsCountsForTheHour() {
        Instant at = HOUR_1.plusSeconds(60);
        for (String honest : List.of("honest-a", "honest-b", "honest-c")) {
            for (int i = 0; i < 4; i++) {
                sendEvent(honest, "free", "allowed", "free.default", at = at.plusSeconds(1));
            }
        }
        // A shadow denial is still an allowed request: it does not make a client noisy.
        sendEvent("honest-b", "free", "shadow_denied", "free.shadow", at = at.plusSeconds(1));

        for (int i = 0; i < 5; i++) {
            sendEvent(NOISY, "free", "allowed", "free.default", at = at.plusSeconds(1));
        }
        sendEvent(NOISY, "free", "shadow_denied", "free.shadow", at = at.plusSeconds(1));
        for (int i = 0; i < 3; i++) {
            sendEvent(NOISY, "free", "denied", "free.default", at = at.plusSeconds(1));
        }
        sendEvent(NOISY, "free", "denied", null, at = at.plusSeconds(1));
        sendEvent(NOISY, "free", "unavailable", "free.default", at = at.plusSeconds(1));
        sendEvent(NOISY, "pro", "shed", null, at = at.plusSeconds(1));

        List<TestRecord<String, String>> records = this.rollups.readRecordsToList();
        String key = NOISY + "@2026-11-30T22:00:00Z";
        // A changelog: one record per update from the first denial on, 6 updates in all.
        assertThat(records).extracting(TestRecord::key).containsOnly(key).hasSize(6);
        assertThat(json(records.get(0).value()).path("denied").asLong()).isEqualTo(1);

        JsonNode latest = json(records.get(records.size() - 1).value());
        assertThat(latest.path("schema").asInt()).isEqualTo(1);
        assertThat(latest.path("client").asString()).isEqualTo(NOISY);
        assertThat(latest.path("tier").asString()).as("tier of the latest event").isEqualTo("pro");
        assertThat(latest.path("hourStart").asString()).isEqualTo("2026-11-30T22:00:00Z");
        assertThat(latest.path("requests").asLong()).isEqualTo(12);
        assertThat(latest.path("allowed").asLong()).isEqualTo(6);
        assertThat(latest.path("denied").asLong()).as("denied, unavailable and shed").isEqualTo(6);
        assertThat(latest.path("shadowDenied").asLong()).isEqualTo(1);
        assertThat(deniedByRule(latest)).containsExactlyInAnyOrderEntriesOf(Map.of("free.default", 3L, "none", 1L));
    }

    @Test
    void eachHourIsRolledUpUnderItsOwnKey() {
        sendEvent(NOISY, "free", "denied", "free.default", HOUR_1.plusSeconds(10));
        sendEvent(NOISY, "free", "allowed", "free.default", HOUR_1.plus(Duration.ofMinutes(59)));
        sendEvent("late-bloomer", "pro", "allowed", "pro.default", HOUR_1.plusSeconds(20));
        sendEvent(NOISY, "free", "denied", "free-hourly", HOUR_2);
        sendEvent("late-bloomer", "pro", "allowed", "pro.default", HOUR_2.plusSeconds(5));
        sendEvent("late-bloomer", "pro", "denied", "pro.default", HOUR_2.plusSeconds(6));

        Map<String, String> latest = this.rollups.readKeyValuesToMap();

        assertThat(latest).containsOnlyKeys(NOISY + "@2026-11-30T22:00:00Z", NOISY + "@2026-11-30T23:00:00Z",
                "late-bloomer@2026-11-30T23:00:00Z");
        JsonNode noisyHour1 = json(latest.get(NOISY + "@2026-11-30T22:00:00Z"));
        assertThat(noisyHour1.path("requests").asLong()).isEqualTo(2);
        assertThat(noisyHour1.path("denied").asLong()).isEqualTo(1);
        assertThat(deniedByRule(noisyHour1)).containsExactlyEntriesOf(Map.of("free.default", 1L));
        JsonNode noisyHour2 = json(latest.get(NOISY + "@2026-11-30T23:00:00Z"));
        assertThat(noisyHour2.path("requests").asLong()).isEqualTo(1);
        assertThat(deniedByRule(noisyHour2)).containsExactlyEntriesOf(Map.of("free-hourly", 1L));
        JsonNode lateBloomer = json(latest.get("late-bloomer@2026-11-30T23:00:00Z"));
        assertThat(lateBloomer.path("requests").asLong()).as("its allowed hour-1 request is not counted").isEqualTo(2);
        assertThat(lateBloomer.path("allowed").asLong()).isEqualTo(1);
        assertThat(lateBloomer.path("denied").asLong()).isEqualTo(1);
    }

    @Test
    void recordsThatCannotBeCountedAreSkippedAndTheStreamCarriesOn() {
        Instant at = HOUR_1.plusSeconds(1);
        send(NOISY, raw("this is not json"), at);
        send(NOISY, raw("{\"schema\":1,\"client\":"), at);
        send(NOISY, raw("[1,2,3]"), at);
        send(NOISY, new byte[0], at);
        send(NOISY, null, at);
        send("route:demo-api", event(null, "free", "denied", "free.default", at), at);
        send(NOISY, raw("{\"schema\":2,\"client\":\"" + NOISY + "\",\"verdict\":\"denied\"}"), at);
        // Keyed for another client: counting it under its key would credit the wrong client.
        send("someone-else", event(NOISY, "free", "denied", "free.default", at), at);

        sendEvent(NOISY, "free", "denied", "free.default", at.plusSeconds(1));

        Map<String, String> latest = this.rollups.readKeyValuesToMap();
        assertThat(latest).containsOnlyKeys(NOISY + "@2026-11-30T22:00:00Z");
        JsonNode rollup = json(latest.get(NOISY + "@2026-11-30T22:00:00Z"));
        assertThat(rollup.path("requests").asLong()).isEqualTo(1);
        assertThat(rollup.path("denied").asLong()).isEqualTo(1);
    }

    @Test
    void anEventArrivingAfterItsHourAndTheGracePeriodIsNotCounted() {
        sendEvent(NOISY, "free", "denied", "free.default", HOUR_1.plusSeconds(10));
        // Moves stream time past the end of hour 1 plus grace.
        sendEvent("honest-a", "free", "allowed", "free.default",
                HOUR_2.plus(RollupTopology.GRACE).plusSeconds(1));
        sendEvent(NOISY, "free", "denied", "free.default", HOUR_1.plusSeconds(20));

        Map<String, String> latest = this.rollups.readKeyValuesToMap();
        assertThat(latest).containsOnlyKeys(NOISY + "@2026-11-30T22:00:00Z");
        assertThat(json(latest.get(NOISY + "@2026-11-30T22:00:00Z")).path("requests").asLong()).isEqualTo(1);
    }

    /** Keyed by its client, with the event time as record timestamp, as the gateway produces it. */
    private void sendEvent(String client, String tier, String verdict, String rule, Instant time) {
        send(client, event(client, tier, verdict, rule, time), time);
    }

    private void send(String key, byte[] value, Instant timestamp) {
        this.decisions.pipeInput(key, value, timestamp);
    }

    static JsonNode json(String value) {
        return Json.MAPPER.readTree(value);
    }

    static Map<String, Long> deniedByRule(JsonNode rollup) {
        Map<String, Long> byRule = new TreeMap<>();
        rollup.path("deniedByRule").properties().forEach(e -> byRule.put(e.getKey(), e.getValue().asLong()));
        return byRule;
    }
}

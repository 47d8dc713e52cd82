package dev.ratelimiter.rollup;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import tools.jackson.databind.JsonNode;

import static dev.ratelimiter.rollup.RollupTopologyTest.deniedByRule;
import static dev.ratelimiter.rollup.RollupTopologyTest.json;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rollup against a real broker: partitions, commits, the window store's changelog topic and the output topic
 * all as in production, which the topology test driver does not exercise.
 */
@Timeout(120)
class UsageRollupIntegrationTest {

    private static final String INPUT = "it.decisions";

    private static final String OUTPUT = "it.usage-rollup";

    private static final int PARTITIONS = 2;

    private static final String NOISY = "noisy-client-0000000000";

    private static final int NOISY_ALLOWED = 50;

    private static final int NOISY_DENIED_BY_DEFAULT = 80;

    private static final int NOISY_DENIED_HOURLY = 20;

    private static final int HONEST_CLIENTS = 50;

    private static final int HONEST_REQUESTS_EACH = 17;

    private static final Duration WAIT_FOR_ROLLUP = Duration.ofSeconds(60);

    private static EmbeddedKafkaKraftBroker broker;

    @TempDir
    Path stateDir;

    @BeforeAll
    static void startBroker() {
        broker = new EmbeddedKafkaKraftBroker(1, PARTITIONS);
        broker.afterPropertiesSet();
        // The broker publishes its address as the system property spring.kafka.bootstrap-servers, which every later
        // context of this JVM would read: a test of how the limiter behaves without Kafka would then find one.
        System.clearProperty("spring.kafka.bootstrap-servers");
        broker.addTopics(new NewTopic(INPUT, PARTITIONS, (short) 1), new NewTopic(OUTPUT, PARTITIONS, (short) 1));
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.destroy();
        }
    }

    @Test
    void rollsUpOnlyTheNoisyClientWithExactCounts() throws Exception {
        // The last full hour: recent enough that no broker retention touches the records, and the events below
        // (spread over 50 minutes) cannot spill into the next hour.
        Instant hourStart = Instant.now().truncatedTo(ChronoUnit.HOURS).minus(Duration.ofHours(1));
        int noisyRequests = produceDecisions(hourStart);

        Properties properties = new RollupSettings(broker.getBrokersAsString(), INPUT, OUTPUT,
                "it-rollup", this.stateDir.toString()).streamsProperties();
        properties.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        properties.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        properties.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);

        KafkaStreams streams = new KafkaStreams(new RollupTopology(INPUT, OUTPUT).build(), properties);
        List<ConsumerRecord<String, String>> rollups;
        try {
            streams.start();
            rollups = consumeUntilRolledUp(UsageRollupRecord.key(NOISY, hourStart), noisyRequests);
        }
        finally {
            streams.close(Duration.ofSeconds(20));
        }

        assertThat(rollups).extracting(ConsumerRecord::key)
                .as("only the client denied in the hour is rolled up")
                .containsOnly(UsageRollupRecord.key(NOISY, hourStart));
        JsonNode latest = json(rollups.get(rollups.size() - 1).value());
        assertThat(latest.path("client").asString()).isEqualTo(NOISY);
        assertThat(latest.path("tier").asString()).isEqualTo("free");
        assertThat(latest.path("hourStart").asString()).isEqualTo(hourStart.toString());
        assertThat(latest.path("requests").asLong()).isEqualTo(noisyRequests);
        assertThat(latest.path("allowed").asLong()).isEqualTo(NOISY_ALLOWED);
        assertThat(latest.path("denied").asLong()).isEqualTo(NOISY_DENIED_BY_DEFAULT + NOISY_DENIED_HOURLY);
        assertThat(latest.path("shadowDenied").asLong()).isZero();
        assertThat(deniedByRule(latest)).containsExactlyInAnyOrderEntriesOf(
                Map.of("free.default", (long) NOISY_DENIED_BY_DEFAULT, "free-hourly", (long) NOISY_DENIED_HOURLY));
    }

    /**
     * Writes 1,000 events the way the gateway does: 50 honest clients with 17 allowed requests each, and among them
     * one noisy client with 150 requests, every third allowed and the rest denied (80 by one rule, then 20 by
     * another). Returns the noisy client's request count.
     */
    private static int produceDecisions(Instant hourStart) throws Exception {
        int noisyRequests = NOISY_ALLOWED + NOISY_DENIED_BY_DEFAULT + NOISY_DENIED_HOURLY;
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString());
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        List<Future<RecordMetadata>> sends = new ArrayList<>();
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(config, new StringSerializer(),
                new ByteArraySerializer())) {
            Instant time = hourStart.plusSeconds(60);
            int noisySent = 0;
            int noisyDenied = 0;
            for (int round = 0; round < HONEST_REQUESTS_EACH; round++) {
                for (int c = 0; c < HONEST_CLIENTS; c++) {
                    String honest = "honest-client-" + c;
                    time = time.plusMillis(250);
                    sends.add(send(producer, honest,
                            DecisionEvents.event(honest, "pro", "allowed", "pro.default", time), time));
                }
                for (int n = 0; n < 9 && noisySent < noisyRequests; n++, noisySent++) {
                    time = time.plusMillis(250);
                    byte[] event;
                    if (noisySent % 3 == 0) {
                        event = DecisionEvents.event(NOISY, "free", "allowed", "free.default", time);
                    }
                    else {
                        String rule = (noisyDenied++ < NOISY_DENIED_BY_DEFAULT) ? "free.default" : "free-hourly";
                        event = DecisionEvents.event(NOISY, "free", "denied", rule, time);
                    }
                    sends.add(send(producer, NOISY, event, time));
                }
            }
            producer.flush();
            assertThat(noisySent).as("test setup: every noisy request sent").isEqualTo(noisyRequests);
            assertThat(time).as("test setup: all events in one hour").isBefore(hourStart.plus(Duration.ofMinutes(50)));
        }
        for (Future<RecordMetadata> sent : sends) {
            // A failed send fails the test here, rather than as a count that is off later.
            sent.get(10, TimeUnit.SECONDS);
        }
        return noisyRequests;
    }

    /** Key = client and timestamp = event time, as src/docs/decision-events.md specifies. */
    private static Future<RecordMetadata> send(KafkaProducer<String, byte[]> producer, String client, byte[] event,
            Instant time) {
        return producer.send(new ProducerRecord<>(INPUT, null, time.toEpochMilli(), client, event));
    }

    /** Reads the output topic until the rollup under {@code key} counts {@code requests}, or the wait is over. */
    private static List<ConsumerRecord<String, String>> consumeUntilRolledUp(String key, long requests) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "it-rollup-reader");
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<String, String>> seen = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.subscribe(List.of(OUTPUT));
            long deadline = System.nanoTime() + WAIT_FOR_ROLLUP.toNanos();
            long latestRequests = -1;
            while (latestRequests != requests && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    seen.add(record);
                    if (key.equals(record.key())) {
                        latestRequests = json(record.value()).path("requests").asLong();
                    }
                }
            }
            assertThat(latestRequests).as("noisy client's requests in its latest rollup within %s", WAIT_FOR_ROLLUP)
                    .isEqualTo(requests);
            // Anything the streams wrote alongside the last update (another client, had it wrongly qualified).
            consumer.poll(Duration.ofMillis(500)).forEach(seen::add);
        }
        return seen;
    }
}

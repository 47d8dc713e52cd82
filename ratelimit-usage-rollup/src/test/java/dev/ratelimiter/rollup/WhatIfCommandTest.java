package dev.ratelimiter.rollup;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.DecisionEventJson;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The what-if replay from the command line, on a real (embedded) broker: the events of the range replayed against a
 * rule given by flags, the report printed as JSON; a usage error is exit code 2 with a sentence, never a stack trace.
 */
class WhatIfCommandTest {

    static final String TOPIC = "ratelimit.decisions";
    static final Instant AT = Instant.parse("2026-12-01T10:00:00Z");

    private static EmbeddedKafkaKraftBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = new EmbeddedKafkaKraftBroker(1, 2, TOPIC);
        broker.afterPropertiesSet();
        // The broker publishes its address as the system property spring.kafka.bootstrap-servers, which every later
        // context of this JVM would read: a test of how the limiter behaves without Kafka would then find one.
        System.clearProperty("spring.kafka.bootstrap-servers");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
            // a burst of 5 from c1 and 1 from c2 on route api; 1 from c1 on another route
            for (int i = 0; i < 7; i++) {
                String client = i == 5 ? "c2" : "c1";
                Instant time = AT.plusMillis(i * 10L);
                dev.ratelimiter.core.DecisionEvent event = new dev.ratelimiter.core.DecisionEvent(time, client, "free",
                        i == 6 ? "other" : "api", "default", dev.ratelimiter.core.DecisionEvent.Verdict.ALLOWED,
                        "evaluated", "store", "free.default", 100, 50, List.of(), null, null, "gw-1", "eu");
                producer.send(new ProducerRecord<>(TOPIC, null, time.toEpochMilli(), client,
                        DecisionEventJson.write(event))).get();
            }
        }
    }

    @AfterAll
    static void stop() {
        broker.destroy();
    }

    @Test
    void printsWhatTheRuleWouldHaveRefusedPerClient() {
        Run run = run("--bootstrap-servers=" + broker.getBrokersAsString(), "--from=" + AT.minusSeconds(60),
                "--to=" + AT.plusSeconds(60), "--algorithm=token-bucket", "--capacity=2", "--refill-tokens=1",
                "--refill-period=PT1H", "--routes=api");
        assertThat(run.code()).as(run.err()).isZero();
        JsonNode report = Json.MAPPER.readTree(run.out());
        assertThat(report.get("events").asLong()).isEqualTo(7);
        assertThat(report.get("matched").asLong()).isEqualTo(6);
        assertThat(report.get("notMatched").asLong()).isEqualTo(1);
        assertThat(report.get("refused").asLong()).isEqualTo(3);
        assertThat(report.get("topRefused").get(0).get("client").asString()).isEqualTo("c1");
        assertThat(report.get("clientHours").get(0).get("hourStart").asString()).isEqualTo("2026-12-01T10:00:00Z");
    }

    @Test
    void aUsageErrorIsExitCodeTwoWithASentence() {
        Run missing = run("--bootstrap-servers=" + broker.getBrokersAsString(), "--to=" + AT,
                "--algorithm=token-bucket", "--capacity=2", "--refill-tokens=1", "--refill-period=PT1H");
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).contains("--from is required");
        Run concurrency = run("--from=" + AT, "--to=" + AT.plusSeconds(1), "--algorithm=concurrency");
        assertThat(concurrency.code()).isEqualTo(2);
        assertThat(concurrency.err()).contains("concurrency cannot be replayed");
        Run unknown = run("--frm=" + AT);
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains("'--frm=").contains("--from=…");
    }

    record Run(int code, String out, String err) {
    }

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = WhatIfCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}

package dev.ratelimiter.kafka;

import java.time.Duration;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The Kafka sink made with the telemetry producer defaults, the user's settings over them. */
class KafkaEventSinkTest {

    /** Nothing listens there; no producer is made in these tests, since nothing is sent. */
    private static final String NO_BROKER = "127.0.0.1:9";

    @Test
    void theSinkSendsToItsTopicWithTheTelemetryDefaultsOfDecisionEvents() {
        KafkaEventSink sink = KafkaEventSink.to(NO_BROKER, "decisions", Duration.ofSeconds(1), Map.of());

        Map<String, Object> config = sink.producers().getConfigurationProperties();
        assertThat(sink.topic()).isEqualTo("decisions");
        assertThat(config).containsEntry(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, NO_BROKER)
                .containsEntry(ProducerConfig.CLIENT_ID_CONFIG, "ratelimit-events")
                .containsEntry(ProducerConfig.LINGER_MS_CONFIG, 20)
                .containsEntry(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000)
                .containsEntry(ProducerConfig.ACKS_CONFIG, "all")
                .containsEntry(ProducerConfig.MAX_BLOCK_MS_CONFIG, 500);
        assertThat(sink.producers().getPhysicalCloseTimeout()).as("shutting down waits on Kafka this long at most")
                .isEqualTo(Duration.ofSeconds(2));
        sink.close();
    }

    @Test
    void theUsersProducerSettingsWin() {
        KafkaEventSink sink = KafkaEventSink.to(NO_BROKER, "decisions", Duration.ofSeconds(1),
                Map.of("linger.ms", "5", "client.id", "mine"));

        assertThat(sink.producers().getConfigurationProperties()).containsEntry(ProducerConfig.LINGER_MS_CONFIG, "5")
                .containsEntry(ProducerConfig.CLIENT_ID_CONFIG, "mine")
                .containsEntry(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        sink.close();
    }
}

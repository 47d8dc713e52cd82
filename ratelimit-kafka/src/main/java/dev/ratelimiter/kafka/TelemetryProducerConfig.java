package dev.ratelimiter.kafka;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Producer settings for what the limiter sends to Kafka on the side (decision events, region usage): batched and
 * compressed, idempotent so a retried batch is not counted twice, and never blocking the sending thread for long when
 * Kafka is away. The user's overrides (Kafka names) come last.
 */
public final class TelemetryProducerConfig {

    private TelemetryProducerConfig() {
    }

    public static Map<String, Object> of(String servers, String clientId, int lingerMs, int deliveryTimeoutMs,
            Map<String, String> overrides) {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        config.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        config.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
        config.put(ProducerConfig.BATCH_SIZE_CONFIG, 65_536);
        config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 500);
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, deliveryTimeoutMs);
        config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        config.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        config.putAll(overrides);
        return config;
    }
}

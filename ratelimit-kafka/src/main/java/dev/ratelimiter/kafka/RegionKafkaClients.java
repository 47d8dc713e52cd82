package dev.ratelimiter.kafka;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The Kafka clients of region shares, made when first needed on the thread that uses them: a Kafka client's
 * constructor fails on bootstrap servers that do not resolve, which must not stop a gateway from starting.
 */
public final class RegionKafkaClients {

    private RegionKafkaClients() {
    }

    /** The usage producer: telemetry defaults, a delivery timeout of a few intervals, the user's overrides. */
    public static Supplier<Producer<String, String>> producer(String servers, Map<String, String> overrides) {
        Map<String, Object> config = TelemetryProducerConfig.of(servers, "ratelimit-region-usage", 50, 10_000,
                overrides);
        return () -> new KafkaProducer<>(config);
    }

    /**
     * The shares consumer: assigned every partition by the listener, no group, no commits; committed records only
     * (the rebalancer writes in transactions); never creating the topic by asking for it.
     */
    public static Supplier<Consumer<String, String>> consumer(String servers, Map<String, String> overrides) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, "ratelimit-region-shares");
        config.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        config.putAll(overrides);
        return () -> new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer());
    }

    /**
     * A reader of a compacted topic every instance reads whole (the abuse scores): the shares consumer's settings
     * under another client id.
     */
    public static Supplier<Consumer<String, String>> consumer(String servers, String clientId,
            Map<String, String> overrides) {
        Map<String, String> named = new HashMap<>();
        named.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        named.putAll(overrides);
        return consumer(servers, named);
    }

    /** A producer of operator records (the abuse scores): acknowledged by all replicas, never batched long. */
    public static Supplier<Producer<String, String>> producer(String servers, String clientId,
            Map<String, String> overrides) {
        Map<String, Object> config = TelemetryProducerConfig.of(servers, clientId, 0, 10_000, overrides);
        return () -> new KafkaProducer<>(config);
    }
}

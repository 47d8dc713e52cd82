package dev.ratelimiter.rollup;

import java.util.Map;
import java.util.Properties;

import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;

/**
 * Where the application runs: read from system properties first (handy on a command line), then environment
 * variables (handy in a container), both under the same names, then defaults.
 *
 * @param bootstrapServers {@code BOOTSTRAP_SERVERS}, default {@code localhost:9092}
 * @param inputTopic {@code INPUT_TOPIC}, default {@value RollupTopology#DEFAULT_INPUT_TOPIC}
 * @param outputTopic {@code OUTPUT_TOPIC}, default {@value RollupTopology#DEFAULT_OUTPUT_TOPIC}
 * @param applicationId {@code APPLICATION_ID}, default {@code ratelimit-usage-rollup}: the consumer group and the
 * prefix of the internal topics
 * @param stateDir {@code STATE_DIR}, or null for Kafka Streams' default
 */
public record RollupSettings(String bootstrapServers, String inputTopic, String outputTopic, String applicationId,
        String stateDir) {

    public static final String DEFAULT_BOOTSTRAP_SERVERS = "localhost:9092";

    public static final String DEFAULT_APPLICATION_ID = "ratelimit-usage-rollup";

    public static RollupSettings from(Properties systemProperties, Map<String, String> environment) {
        Lookup lookup = new Lookup(systemProperties, environment);
        return new RollupSettings(lookup.get("BOOTSTRAP_SERVERS", DEFAULT_BOOTSTRAP_SERVERS),
                lookup.get("INPUT_TOPIC", RollupTopology.DEFAULT_INPUT_TOPIC),
                lookup.get("OUTPUT_TOPIC", RollupTopology.DEFAULT_OUTPUT_TOPIC),
                lookup.get("APPLICATION_ID", DEFAULT_APPLICATION_ID), lookup.get("STATE_DIR", null));
    }

    public Properties streamsProperties() {
        Properties properties = new Properties();
        properties.put(StreamsConfig.APPLICATION_ID_CONFIG, this.applicationId);
        properties.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, this.bootstrapServers);
        if (this.stateDir != null) {
            properties.put(StreamsConfig.STATE_DIR_CONFIG, this.stateDir);
        }
        // Values are parsed inside the topology, so this only matters for a key that is not UTF-8: skip, never stop.
        properties.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
                LogAndContinueExceptionHandler.class.getName());
        return properties;
    }

    private record Lookup(Properties systemProperties, Map<String, String> environment) {

        String get(String name, String defaultValue) {
            String value = this.systemProperties.getProperty(name);
            if (isBlank(value)) {
                value = this.environment.get(name);
            }
            return isBlank(value) ? defaultValue : value.trim();
        }

        private static boolean isBlank(String value) {
            return value == null || value.isBlank();
        }
    }
}

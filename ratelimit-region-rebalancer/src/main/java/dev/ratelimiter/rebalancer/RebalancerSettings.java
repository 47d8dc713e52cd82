package dev.ratelimiter.rebalancer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;

/**
 * How the rebalancer runs: read from system properties first, then environment variables, under the same names,
 * then defaults.
 *
 * @param bootstrapServers {@code BOOTSTRAP_SERVERS}, default {@code localhost:9092}
 * @param usageTopic {@code USAGE_TOPIC}, default {@value RebalancerTopology#DEFAULT_USAGE_TOPIC}
 * @param sharesTopic {@code SHARES_TOPIC}, default {@value RebalancerTopology#DEFAULT_SHARES_TOPIC}
 * @param applicationId {@code APPLICATION_ID}, default {@code ratelimit-region-rebalancer}
 * @param stateDir {@code STATE_DIR}, or null for Kafka Streams' default
 * @param weights {@code REGIONS}: every region and its weight, {@code us-east-1=1,eu-central-1=1,ap-southeast-1=1}
 * (a region without {@code =weight} weighs 1); must match the gateways' {@code ratelimit.regions.weights}
 * @param floor {@code FLOOR}: the part of each limit every region keeps, default 0.05
 * @param headroom {@code HEADROOM}: how far above its demand a region's share is aimed, default 0.2
 * @param interval {@code INTERVAL}: how often shares are recomputed, default 5s
 * @param growDelay {@code GROW_DELAY}: how long after a shrink a grow waits, default 10s — longer than the mirror
 * lag to the farthest region plus a gateway's poll
 * @param idleAfter {@code IDLE_AFTER}: a bucket without usage this long goes back to the default split, default 60s
 * @param reportTtl {@code REPORT_TTL}: an instance with traffic silent this long has lost contact: its bucket's shares
 * are held, default 15s
 * @param forgetLostAfter {@code FORGET_LOST_AFTER}: how long such an instance's last reported share is still taken as
 * in force, default 10m
 */
public record RebalancerSettings(String bootstrapServers, String usageTopic, String sharesTopic, String applicationId,
        String stateDir, Map<String, Double> weights, double floor, double headroom, Duration interval,
        Duration growDelay, Duration idleAfter, Duration reportTtl, Duration forgetLostAfter) {

    /** The levels logback knows, in {@code LOG_LEVEL} and {@code KAFKA_LOG_LEVEL} (any case). */
    private static final List<String> LOG_LEVELS = List.of("ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR",
            "OFF");

    public RebalancerSettings {
        weights = new TreeMap<>(weights);
        if (weights.isEmpty()) {
            throw new IllegalArgumentException("REGIONS must list the regions, e.g. "
                    + "us-east-1=1,eu-central-1=1,ap-southeast-1=1");
        }
        for (Duration each : List.of(interval, growDelay, idleAfter, reportTtl, forgetLostAfter)) {
            if (each.isNegative() || each.isZero()) {
                throw new IllegalArgumentException("INTERVAL, GROW_DELAY, IDLE_AFTER, REPORT_TTL and FORGET_LOST_AFTER "
                        + "must be positive");
            }
        }
    }

    public static RebalancerSettings from(Properties systemProperties, Map<String, String> environment) {
        Lookup lookup = new Lookup(systemProperties, environment);
        return new RebalancerSettings(lookup.get("BOOTSTRAP_SERVERS", "localhost:9092"),
                lookup.get("USAGE_TOPIC", RebalancerTopology.DEFAULT_USAGE_TOPIC),
                lookup.get("SHARES_TOPIC", RebalancerTopology.DEFAULT_SHARES_TOPIC),
                lookup.get("APPLICATION_ID", "ratelimit-region-rebalancer"), lookup.get("STATE_DIR", null),
                weights(lookup.get("REGIONS", "us-east-1,eu-central-1,ap-southeast-1")),
                Double.parseDouble(lookup.get("FLOOR", "0.05")), Double.parseDouble(lookup.get("HEADROOM", "0.2")),
                duration("INTERVAL", lookup.get("INTERVAL", "5s")), duration("GROW_DELAY", lookup.get("GROW_DELAY",
                        "10s")), duration("IDLE_AFTER", lookup.get("IDLE_AFTER", "60s")),
                duration("REPORT_TTL", lookup.get("REPORT_TTL", "15s")),
                duration("FORGET_LOST_AFTER", lookup.get("FORGET_LOST_AFTER", "10m")));
    }

    /**
     * Refuses a {@code LOG_LEVEL} or {@code KAFKA_LOG_LEVEL} (read by the packaged {@code logback.xml}) that is not a
     * level: logback would read it as DEBUG, the volume the file is there to prevent.
     */
    public static void requireLogLevels(Properties systemProperties, Map<String, String> environment) {
        for (String name : List.of("LOG_LEVEL", "KAFKA_LOG_LEVEL")) {
            // As logback looks it up: a system property first, then the environment; set but blank is DEBUG there too.
            String level = systemProperties.getProperty(name, environment.get(name));
            if (level != null && !LOG_LEVELS.contains(level.trim().toUpperCase(Locale.ROOT))) {
                throw new IllegalArgumentException(name + " must be one of " + String.join(", ", LOG_LEVELS)
                        + ", but was '" + level + "' (logback would read it as DEBUG)");
            }
        }
    }

    /** The regions, sorted by name: the order of every share vector. */
    public List<String> regions() {
        return new ArrayList<>(weights.keySet());
    }

    /** The regions and weights as text, as the gateways write them: records of other settings are refused. */
    public String fingerprint() {
        StringBuilder text = new StringBuilder();
        weights.forEach((region, weight) -> text.append(text.isEmpty() ? "" : ",").append(region).append('=')
                .append((double) weight));
        return text.toString();
    }

    public ShareAllocator allocator() {
        return new ShareAllocator(weights.values().stream().mapToDouble(Double::doubleValue).toArray(), floor,
                headroom);
    }

    public Properties streamsProperties() {
        Properties properties = new Properties();
        properties.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        properties.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        if (stateDir != null) {
            properties.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        }
        properties.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
                LogAndContinueExceptionHandler.class.getName());
        // Exactly once: after a crash, the state restored and the shares on the topic agree (a record published but
        // not in the restored state could otherwise be followed by a grow that never shrank it). Gateways read
        // committed records only; the commit interval bounds the delay that adds.
        properties.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        properties.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Math.min(200, interval.toMillis()));
        // A stopped instance stays in the group until its session times out (Kafka Streams does not leave on close),
        // and no share moves meanwhile: 10 s rather than the default 45 s, so a restart or a failover resumes soon.
        properties.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 10_000);
        properties.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 3_000);
        return properties;
    }

    static Map<String, Double> weights(String text) {
        Map<String, Double> weights = new TreeMap<>();
        for (String item : text.split(",")) {
            String[] parts = item.trim().split("=", 2);
            if (parts[0].isEmpty()) {
                continue;
            }
            double weight = parts.length == 2 ? Double.parseDouble(parts[1].trim()) : 1.0;
            if (!(weight > 0) || Double.isInfinite(weight)) {
                throw new IllegalArgumentException("REGIONS: the weight of " + parts[0] + " must be above 0");
            }
            weights.put(parts[0], weight);
        }
        return weights;
    }

    /** {@code 500ms}, {@code 5s}, {@code 1m}, or an ISO-8601 duration. */
    static Duration duration(String name, String text) {
        String value = text.trim().toLowerCase(Locale.ROOT);
        try {
            if (value.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(value.substring(0, value.length() - 2)));
            }
            if (value.endsWith("s")) {
                return Duration.ofSeconds(Long.parseLong(value.substring(0, value.length() - 1)));
            }
            if (value.endsWith("m")) {
                return Duration.ofMinutes(Long.parseLong(value.substring(0, value.length() - 1)));
            }
            return Duration.parse(text.trim());
        }
        catch (RuntimeException ex) {
            throw new IllegalArgumentException(name + " must be a duration such as 500ms, 5s or 1m, but was '" + text
                    + "'");
        }
    }

    private record Lookup(Properties systemProperties, Map<String, String> environment) {

        String get(String name, String defaultValue) {
            String value = systemProperties.getProperty(name);
            if (value == null || value.isBlank()) {
                value = environment.get(name);
            }
            return value == null || value.isBlank() ? defaultValue : value.trim();
        }
    }
}

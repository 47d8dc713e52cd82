package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Decision events: one per decision, queued in memory and sent asynchronously to Kafka (when a broker is
 * configured), a log, and the recent-decisions view of {@code /actuator/ratelimit}.
 */
@ConfigurationProperties("ratelimit.events")
public class DecisionEventProperties {

    /**
     * Whether decisions become events at all.
     */
    private boolean enabled = true;

    /**
     * Events held in memory waiting for the sinks; beyond it new events are dropped and counted
     * (ratelimit.events{result=dropped}). The request path never waits on the queue.
     */
    private int queueCapacity = 10_000;

    /**
     * Decisions kept in memory for the actuator view (newest first).
     */
    private int recent = 100;

    /**
     * Also write every event as a JSON line to the "ratelimit.decisions" logger.
     */
    private boolean log = false;

    /**
     * This instance's name in events. Defaults to the host name and process id.
     */
    private String instance;

    /**
     * This instance's region in events, e.g. eu-west-1.
     */
    private String region;

    private final Kafka kafka = new Kafka();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public int getQueueCapacity() {
        return queueCapacity;
    }

    public void setQueueCapacity(int queueCapacity) {
        this.queueCapacity = queueCapacity;
    }

    public int getRecent() {
        return recent;
    }

    public void setRecent(int recent) {
        this.recent = recent;
    }

    public boolean isLog() {
        return log;
    }

    public void setLog(boolean log) {
        this.log = log;
    }

    public String getInstance() {
        return instance;
    }

    public void setInstance(String instance) {
        this.instance = instance;
    }

    public String getRegion() {
        return region;
    }

    public void setRegion(String region) {
        this.region = region;
    }

    public Kafka getKafka() {
        return kafka;
    }

    /** Events to Kafka. */
    public static class Kafka {

        /**
         * Whether to send events to Kafka. By default they are sent when bootstrap servers are known (this
         * setting's bootstrap-servers, else spring.kafka.bootstrap-servers) and spring-kafka is on the classpath.
         */
        private Boolean enabled;

        /**
         * Kafka bootstrap servers, comma-separated. Defaults to spring.kafka.bootstrap-servers.
         */
        private String bootstrapServers;

        /**
         * Topic the events go to; the record key is the client id, so one client's events stay in order.
         */
        private String topic = "ratelimit.decisions";

        /**
         * How long to stop trying after Kafka could not take an event; events meanwhile are dropped and counted.
         */
        private Duration backOff = Duration.ofSeconds(1);

        /**
         * Producer settings (Kafka names, e.g. linger.ms) that override ours: acks=all, enable.idempotence=true,
         * compression.type=lz4, linger.ms=20, batch.size=65536, max.block.ms=500, delivery.timeout.ms=30000,
         * request.timeout.ms=5000.
         */
        private final Map<String, String> producer = new LinkedHashMap<>();

        public Boolean getEnabled() {
            return enabled;
        }

        public void setEnabled(Boolean enabled) {
            this.enabled = enabled;
        }

        public String getBootstrapServers() {
            return bootstrapServers;
        }

        public void setBootstrapServers(String bootstrapServers) {
            this.bootstrapServers = bootstrapServers;
        }

        public String getTopic() {
            return topic;
        }

        public void setTopic(String topic) {
            this.topic = topic;
        }

        public Duration getBackOff() {
            return backOff;
        }

        public void setBackOff(Duration backOff) {
            this.backOff = backOff;
        }

        public Map<String, String> getProducer() {
            return producer;
        }
    }
}

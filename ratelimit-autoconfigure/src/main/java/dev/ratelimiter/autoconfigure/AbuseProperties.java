package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

import dev.ratelimiter.core.AbuseScores;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Limits that follow an abuse score: a client's per-API-key rate limits scaled by a factor between
 * {@code min-factor} and 1 that its score maps to, returning toward 1 by {@code half-life}. Scores come from the
 * compacted topic (the usage rollup's, an operator's system) and the rules API.
 */
@ConfigurationProperties("ratelimit.abuse")
public class AbuseProperties {

    /**
     * Whether clients' abuse scores scale their limits. Off, scores are neither read nor accepted.
     */
    private boolean enabled;

    /**
     * Lowest factor a score can scale a limit by: score 1 holds a client to this share of its limits, score 0 leaves
     * them whole, in between linearly. Above 0, at most 1.
     */
    private double minFactor = 0.1;

    /**
     * How long a score's lowering takes to halve without a new score: a client at factor 0.1 is at 0.55 one
     * half-life later, 0.775 two, and whole again (forgotten) once the lowering is under half a percent.
     */
    private Duration halfLife = Duration.ofMinutes(10);

    /**
     * Most clients whose scores are held; past it the client whose score arrived longest ago is forgotten (its
     * limits whole again).
     */
    private int maxClients = 100_000;

    /**
     * Rule ids that no score scales (e.g. a rule that already is a punishment, or a contractual quota).
     */
    private Set<String> exemptRules = new LinkedHashSet<>();

    /**
     * Tiers whose clients no score scales (e.g. internal or partner tiers).
     */
    private Set<String> exemptTiers = new LinkedHashSet<>();

    private final Kafka kafka = new Kafka();

    AbuseScores.Settings settings() {
        return new AbuseScores.Settings(minFactor, halfLife, maxClients, exemptRules, exemptTiers);
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public double getMinFactor() {
        return minFactor;
    }

    public void setMinFactor(double minFactor) {
        this.minFactor = minFactor;
    }

    public Duration getHalfLife() {
        return halfLife;
    }

    public void setHalfLife(Duration halfLife) {
        this.halfLife = halfLife;
    }

    public int getMaxClients() {
        return maxClients;
    }

    public void setMaxClients(int maxClients) {
        this.maxClients = maxClients;
    }

    public Set<String> getExemptRules() {
        return exemptRules;
    }

    public void setExemptRules(Set<String> exemptRules) {
        this.exemptRules = exemptRules;
    }

    public Set<String> getExemptTiers() {
        return exemptTiers;
    }

    public void setExemptTiers(Set<String> exemptTiers) {
        this.exemptTiers = exemptTiers;
    }

    public Kafka getKafka() {
        return kafka;
    }

    /** The score topic. */
    public static class Kafka {

        /**
         * Kafka bootstrap servers of the score topic; unset, spring.kafka.bootstrap-servers. Neither set: scores
         * come only through the rules API, to this instance alone.
         */
        private String bootstrapServers;

        /**
         * Compacted topic of abuse scores, keyed by client id (as in decision events).
         */
        private String topic = "ratelimit.abuse-scores";

        /**
         * How long the rules API waits for Kafka to take an operator's score before answering 503.
         */
        private Duration publishTimeout = Duration.ofSeconds(5);

        /**
         * Kafka consumer settings (Kafka's own names) over the limiter's defaults.
         */
        private Map<String, String> consumer = new HashMap<>();

        /**
         * Kafka producer settings (Kafka's own names) over the limiter's defaults, for operators' scores.
         */
        private Map<String, String> producer = new HashMap<>();

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

        public Duration getPublishTimeout() {
            return publishTimeout;
        }

        public void setPublishTimeout(Duration publishTimeout) {
            this.publishTimeout = publishTimeout;
        }

        public Map<String, String> getConsumer() {
            return consumer;
        }

        public void setConsumer(Map<String, String> consumer) {
            this.consumer = consumer;
        }

        public Map<String, String> getProducer() {
            return producer;
        }

        public void setProducer(Map<String, String> producer) {
            this.producer = producer;
        }
    }
}

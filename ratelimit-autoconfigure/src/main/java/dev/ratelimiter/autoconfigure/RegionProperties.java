package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.RegionShares;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Several regions, one global limit: this instance's region, every region's weight in the default split, and the
 * Kafka topics usage goes out on and shares come in on. Rules with {@code scope: global} are split between the
 * regions; others are not affected.
 */
@ConfigurationProperties("ratelimit.regions")
public class RegionProperties {

    /**
     * This instance's region (e.g. us-east-1). Setting it turns region shares on.
     */
    private String local;

    /**
     * Every region (this one included) and its weight in the default split of a global limit, e.g. {us-east-1: 1,
     * eu-central-1: 1, ap-southeast-1: 1}: 1,000 splits into 334 (ap-southeast-1, the larger remainder to the region
     * first by name), 333, 333. Must be the same in every region.
     */
    private Map<String, Double> weights = new LinkedHashMap<>();

    /**
     * The least part of each global limit the rebalancer leaves a region (its FLOOR; keep the two equal). An
     * instance holds each global bucket to it until it has read the shares topic to its end (or stale-after has
     * passed), since until then it cannot know which buckets the rebalancer moved quota away from this region.
     */
    private double floor = 0.05;

    /**
     * How often each instance publishes what it admitted and refused per global bucket.
     */
    private Duration usageInterval = Duration.ofSeconds(5);

    /**
     * After how long without word from the rebalancer (a share or its heartbeat) the shares are reported stale; the
     * region keeps limiting on them.
     */
    private Duration staleAfter = Duration.ofSeconds(30);

    /**
     * Global buckets counted at once per instance; a bucket beyond them is not reported and keeps the default split.
     * Also the most buckets holding a moved share whose rule is in force here (and a tenth of it for records whose
     * rule or limit has not reached this region yet); past it the bucket whose record came longest ago goes back to
     * the default split.
     */
    private int maxKeys = 100_000;

    private final Kafka kafka = new Kafka();

    /** This region's shares under these settings; refuses settings that cannot split a limit between regions. */
    RegionShares shares() {
        if (weights.size() < 2) {
            // One region alone would enforce each global limit whole here, beside the others doing the same.
            throw new InvalidLimitException("ratelimit.regions.weights", "ratelimit.regions.local is '" + local
                    + "', but ratelimit.regions.weights lists " + weights.keySet() + ": list every region with its "
                    + "weight (the same in every region), e.g. {us-east-1: 1, eu-central-1: 1, ap-southeast-1: 1}, "
                    + "or leave ratelimit.regions.local unset.");
        }
        return new RegionShares(local, weights, maxKeys);
    }

    public String getLocal() {
        return local;
    }

    public void setLocal(String local) {
        this.local = local;
    }

    public Map<String, Double> getWeights() {
        return weights;
    }

    public void setWeights(Map<String, Double> weights) {
        this.weights = weights;
    }

    public double getFloor() {
        return floor;
    }

    public void setFloor(double floor) {
        this.floor = floor;
    }

    public Duration getUsageInterval() {
        return usageInterval;
    }

    public void setUsageInterval(Duration usageInterval) {
        this.usageInterval = usageInterval;
    }

    public Duration getStaleAfter() {
        return staleAfter;
    }

    public void setStaleAfter(Duration staleAfter) {
        this.staleAfter = staleAfter;
    }

    public int getMaxKeys() {
        return maxKeys;
    }

    public void setMaxKeys(int maxKeys) {
        this.maxKeys = maxKeys;
    }

    public Kafka getKafka() {
        return kafka;
    }

    /** The topics between the regions and the rebalancer. */
    public static class Kafka {

        /**
         * Kafka bootstrap servers of this region's cluster, comma-separated. Defaults to
         * spring.kafka.bootstrap-servers.
         */
        private String bootstrapServers;

        /**
         * Topic usage is published to, keyed by bucket; mirrored to the rebalancer's cluster.
         */
        private String usageTopic = "ratelimit.region-usage";

        /**
         * Compacted topic the rebalancer publishes shares to, keyed by bucket; mirrored to every region.
         */
        private String sharesTopic = "ratelimit.region-shares";

        /**
         * Producer settings (Kafka names) that override ours.
         */
        private final Map<String, String> producer = new LinkedHashMap<>();

        /**
         * Consumer settings (Kafka names) that override ours.
         */
        private final Map<String, String> consumer = new LinkedHashMap<>();

        public String getBootstrapServers() {
            return bootstrapServers;
        }

        public void setBootstrapServers(String bootstrapServers) {
            this.bootstrapServers = bootstrapServers;
        }

        public String getUsageTopic() {
            return usageTopic;
        }

        public void setUsageTopic(String usageTopic) {
            this.usageTopic = usageTopic;
        }

        public String getSharesTopic() {
            return sharesTopic;
        }

        public void setSharesTopic(String sharesTopic) {
            this.sharesTopic = sharesTopic;
        }

        public Map<String, String> getProducer() {
            return producer;
        }

        public Map<String, String> getConsumer() {
            return consumer;
        }
    }
}

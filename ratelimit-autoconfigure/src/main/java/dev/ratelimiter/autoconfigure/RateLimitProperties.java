package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Rate limiter settings, bound from {@code ratelimit.*}.
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties {

    /**
     * Whether requests are rate-limited at all.
     */
    private boolean enabled = true;

    /**
     * Tier of API keys that are not listed under any tier. Must name a configured tier when any tier is configured.
     */
    private String defaultTier = "default";

    /**
     * Tiers by name: the API keys that belong to each and its limits per route class.
     */
    private Map<String, Tier> tiers = new LinkedHashMap<>();

    /**
     * Order of the rate-limit global filter; the default runs it before the gateway's routing filters.
     */
    private int filterOrder = -100;

    private final ApiKey apiKey = new ApiKey();

    private final Store store = new Store();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getDefaultTier() {
        return defaultTier;
    }

    public void setDefaultTier(String defaultTier) {
        this.defaultTier = defaultTier;
    }

    public Map<String, Tier> getTiers() {
        return tiers;
    }

    public void setTiers(Map<String, Tier> tiers) {
        this.tiers = tiers;
    }

    public int getFilterOrder() {
        return filterOrder;
    }

    public void setFilterOrder(int filterOrder) {
        this.filterOrder = filterOrder;
    }

    public ApiKey getApiKey() {
        return apiKey;
    }

    public Store getStore() {
        return store;
    }

    /** How clients identify themselves. */
    public static class ApiKey {

        /**
         * Request header carrying the client's API key.
         */
        private String header = "X-API-Key";

        /**
         * What to do with a request that has no API key: reject it, or pass it on without limiting.
         */
        private MissingKeyAction whenMissing = MissingKeyAction.REJECT;

        /**
         * HTTP status of the answer to a request without an API key, when rejecting.
         */
        private int missingStatus = 401;

        public String getHeader() {
            return header;
        }

        public void setHeader(String header) {
            this.header = header;
        }

        public MissingKeyAction getWhenMissing() {
            return whenMissing;
        }

        public void setWhenMissing(MissingKeyAction whenMissing) {
            this.whenMissing = whenMissing;
        }

        public int getMissingStatus() {
            return missingStatus;
        }

        public void setMissingStatus(int missingStatus) {
            this.missingStatus = missingStatus;
        }
    }

    /** What to do with a request that has no API key. */
    public enum MissingKeyAction {
        /** Answer with {@code missing-status} and a problem body; the upstream never sees the request. */
        REJECT,
        /** Forward the request without rate-limiting it. */
        ALLOW
    }

    /** One tier: the API keys in it and its limit per route class. */
    public static class Tier {

        /**
         * API keys that belong to this tier. A key may belong to one tier only.
         */
        private List<String> apiKeys = new ArrayList<>();

        /**
         * Limits by route class. The limit named "default" applies to route classes without a limit of their own.
         */
        private Map<String, Limit> limits = new LinkedHashMap<>();

        public List<String> getApiKeys() {
            return apiKeys;
        }

        public void setApiKeys(List<String> apiKeys) {
            this.apiKeys = apiKeys;
        }

        public Map<String, Limit> getLimits() {
            return limits;
        }

        public void setLimits(Map<String, Limit> limits) {
            this.limits = limits;
        }
    }

    /** One limit. */
    public static class Limit {

        /**
         * Counting algorithm.
         */
        private Algorithm algorithm = Algorithm.TOKEN_BUCKET;

        /**
         * Largest burst: tokens a full bucket holds.
         */
        private long capacity;

        /**
         * Tokens added back to the bucket every refill period, continuously (not in steps).
         */
        private long refillTokens;

        /**
         * Period over which refill-tokens are added back.
         */
        private Duration refillPeriod = Duration.ofSeconds(1);

        public Algorithm getAlgorithm() {
            return algorithm;
        }

        public void setAlgorithm(Algorithm algorithm) {
            this.algorithm = algorithm;
        }

        public long getCapacity() {
            return capacity;
        }

        public void setCapacity(long capacity) {
            this.capacity = capacity;
        }

        public long getRefillTokens() {
            return refillTokens;
        }

        public void setRefillTokens(long refillTokens) {
            this.refillTokens = refillTokens;
        }

        public Duration getRefillPeriod() {
            return refillPeriod;
        }

        public void setRefillPeriod(Duration refillPeriod) {
            this.refillPeriod = refillPeriod;
        }
    }

    /** Counting algorithms. */
    public enum Algorithm {
        /** A bucket of capacity tokens refilled continuously: allows bursts, holds the average. */
        TOKEN_BUCKET
    }

    /** Where buckets live. */
    public static class Store {

        /**
         * Where buckets live: auto uses Redis when it answers at start-up, else memory.
         */
        private StoreType type = StoreType.AUTO;

        /**
         * Longest a decision waits for Redis before deciding from this instance's memory instead. Never retried.
         */
        private Duration timeout = Duration.ofMillis(5);

        /**
         * Longest the start-up check waits for Redis: one decision that opens the connection and loads the script.
         */
        private Duration startupProbeTimeout = Duration.ofSeconds(2);

        /**
         * Prefix of every Redis key the limiter writes.
         */
        private String keyPrefix = "rl";

        /**
         * Most buckets kept in this instance's memory (in memory mode, and as the fallback when Redis fails).
         */
        private long localMaxKeys = 100_000;

        public StoreType getType() {
            return type;
        }

        public void setType(StoreType type) {
            this.type = type;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public Duration getStartupProbeTimeout() {
            return startupProbeTimeout;
        }

        public void setStartupProbeTimeout(Duration startupProbeTimeout) {
            this.startupProbeTimeout = startupProbeTimeout;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public long getLocalMaxKeys() {
            return localMaxKeys;
        }

        public void setLocalMaxKeys(long localMaxKeys) {
            this.localMaxKeys = localMaxKeys;
        }
    }

    /** Where buckets live. */
    public enum StoreType {
        /** Redis if it answers at start-up; otherwise memory, with a warning. */
        AUTO,
        /** Redis, always; a failing Redis is bridged by deciding from memory per request. */
        REDIS,
        /** This instance's memory only: exact for a single instance, per-instance for a fleet. */
        MEMORY
    }
}

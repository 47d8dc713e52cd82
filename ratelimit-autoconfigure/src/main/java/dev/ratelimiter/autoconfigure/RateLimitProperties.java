package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

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
     * Tiers by name: the API keys that belong to each, whether the tier is enforced, and its limits per route class.
     */
    private Map<String, Tier> tiers = new LinkedHashMap<>();

    /**
     * Rules by id, beyond the tiers' per-route-class limits: quotas, per-endpoint, per-tenant and per-IP caps,
     * customer overrides.
     */
    private Map<String, RuleProperties> rules = new LinkedHashMap<>();

    /**
     * Whether every request is allowed without consulting any rule. The last-resort switch for an incident; it can
     * also be flipped at runtime through the ratelimitcontrol actuator endpoint.
     */
    private boolean killSwitch;

    /**
     * Order of the rate-limit global filter; the default runs it before the gateway's routing filters.
     */
    private int filterOrder = -100;

    @NestedConfigurationProperty
    private final ApiKeyProperties apiKey = new ApiKeyProperties();

    private final ClientId clientId = new ClientId();

    @NestedConfigurationProperty
    private final IdentityProperties identity = new IdentityProperties();

    @NestedConfigurationProperty
    private final StoreProperties store = new StoreProperties();

    private final RuleStore ruleStore = new RuleStore();

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

    public Map<String, RuleProperties> getRules() {
        return rules;
    }

    public void setRules(Map<String, RuleProperties> rules) {
        this.rules = rules;
    }

    public boolean isKillSwitch() {
        return killSwitch;
    }

    public void setKillSwitch(boolean killSwitch) {
        this.killSwitch = killSwitch;
    }

    public IdentityProperties getIdentity() {
        return identity;
    }

    public RuleStore getRuleStore() {
        return ruleStore;
    }

    public int getFilterOrder() {
        return filterOrder;
    }

    public void setFilterOrder(int filterOrder) {
        this.filterOrder = filterOrder;
    }

    public ApiKeyProperties getApiKey() {
        return apiKey;
    }

    public StoreProperties getStore() {
        return store;
    }

    public ClientId getClientId() {
        return clientId;
    }

    /**
     * How API keys become client ids: the partition of every bucket key in Redis, the client of decision events and
     * of the actuator view, and the hashed API keys of customer overrides in the rule store.
     */
    public static class ClientId {

        /**
         * Secret client ids are an HMAC-SHA256 under: at least 16 bytes, random (e.g. openssl rand -base64 32). Unset:
         * a plain SHA-256 of the API key, which anyone who can read Redis, the events or the actuator view reverses
         * for a guessable key by hashing candidates. Changing it changes every bucket key, so counters start afresh.
         */
        private String secret;

        /**
         * The secret being rotated away from: customer overrides whose API keys were hashed under it keep matching
         * until they are posted again. Remove it once the rateLimit health component's ruleApiKeys detail names no
         * rule hashed under the previous secret.
         */
        private String previousSecret;

        public String getSecret() {
            return secret;
        }

        public void setSecret(String secret) {
            this.secret = secret;
        }

        public String getPreviousSecret() {
            return previousSecret;
        }

        public void setPreviousSecret(String previousSecret) {
            this.previousSecret = previousSecret;
        }
    }


    /** One tier: the API keys in it and its limit per route class. */
    public static class Tier {

        /**
         * API keys that belong to this tier. A key as written is one sent in a header; a key from the token is
         * written with its source: claim:partner-app for a token whose azp claim is partner-app (principal:,
         * expression: likewise), and no header ever matches it. A key may belong to one tier only.
         */
        private List<String> apiKeys = new ArrayList<>();

        /**
         * Whether denials of this tier's clients are enforced; false evaluates and records them as in shadow mode.
         */
        private boolean enforce = true;

        /**
         * Token buckets per client by route class. The limit named "default" applies to route classes without a
         * limit of their own. Each becomes a rule with id "tier.route-class" in the group "tier-default".
         */
        private Map<String, LimitProperties> limits = new LinkedHashMap<>();

        public boolean isEnforce() {
            return enforce;
        }

        public void setEnforce(boolean enforce) {
            this.enforce = enforce;
        }

        public List<String> getApiKeys() {
            return apiKeys;
        }

        public void setApiKeys(List<String> apiKeys) {
            this.apiKeys = apiKeys;
        }

        public Map<String, LimitProperties> getLimits() {
            return limits;
        }

        public void setLimits(Map<String, LimitProperties> limits) {
            this.limits = limits;
        }
    }

    /** The runtime rule store. */
    public static class RuleStore {

        /**
         * Whether rules can be changed at runtime (through the actuator endpoints) and are shared through Redis.
         */
        private boolean enabled = true;

        /**
         * How often each instance checks the store's version, in case a change announcement was missed.
         */
        private Duration pollInterval = Duration.ofSeconds(10);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getPollInterval() {
            return pollInterval;
        }

        public void setPollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
        }
    }
}

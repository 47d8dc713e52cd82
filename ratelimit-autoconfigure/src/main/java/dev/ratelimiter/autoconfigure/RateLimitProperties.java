package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.UnknownApiKeyPolicy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.ClientAddressResolver;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;
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

    private final ApiKey apiKey = new ApiKey();

    private final ClientId clientId = new ClientId();

    private final Identity identity = new Identity();

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

    public Identity getIdentity() {
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

    public ApiKey getApiKey() {
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

    /** How clients identify themselves. */
    /** What happens to API keys nobody listed ({@code ratelimit.api-key.unknown}). */
    public static class Unknown {

        /**
         * default-tier: a client of the default tier like any other; reject: refused with {@code status} before any
         * rule or store is asked; per-address: limited by one small bucket per client address ({@code limit}) and
         * by nothing else, so rotating keys buys nothing and creates no state per key.
         */
        private UnknownApiKeyPolicy policy = UnknownApiKeyPolicy.DEFAULT_TIER;

        /** Status of the refusal under the reject policy (401 or 403). */
        private int status = 401;

        /**
         * The per-address bucket under the per-address policy (a token bucket or sliding window, keyed by the client
         * address as ratelimit.identity resolves it). Default: a burst of 10, refilled at 1 per second.
         */
        private final LimitProperties limit = defaultUnknownLimit();

        private static LimitProperties defaultUnknownLimit() {
            LimitProperties limit = new LimitProperties();
            limit.setCapacity(10);
            limit.setRefillTokens(1);
            limit.setRefillPeriod(java.time.Duration.ofSeconds(1));
            return limit;
        }

        public UnknownApiKeyPolicy getPolicy() {
            return policy;
        }

        public void setPolicy(UnknownApiKeyPolicy policy) {
            this.policy = policy;
        }

        public int getStatus() {
            return status;
        }

        public void setStatus(int status) {
            this.status = status;
        }

        public LimitProperties getLimit() {
            return limit;
        }
    }

    public static class ApiKey {

        /**
         * Request header carrying the client's API key.
         */
        private String header = "X-API-Key";

        /**
         * What to do with a request that has no API key: reject it, or evaluate it by the rules that need no key.
         */
        private MissingKeyAction whenMissing = MissingKeyAction.REJECT;

        /**
         * HTTP status of the answer to a request without an API key, when rejecting.
         */
        private int missingStatus = 401;

        /**
         * Most characters an API key may have; a longer one is refused with 400 before any rule or store is asked. 0:
         * no limit but the server's header size.
         */
        private int maxLength;

        /**
         * A regular expression every API key must match as a whole (e.g. [A-Za-z0-9_-]{16,64}); a key that does not
         * is refused with 400 before any rule or store is asked, so junk and rotating keys cost nothing. Empty: none.
         */
        private String pattern;

        /** API keys that no tier lists and no customer override names. */
        private final Unknown unknown = new Unknown();

        public Unknown getUnknown() {
            return unknown;
        }

        public int getMaxLength() {
            return maxLength;
        }

        public void setMaxLength(int maxLength) {
            this.maxLength = maxLength;
        }

        public String getPattern() {
            return pattern;
        }

        public void setPattern(String pattern) {
            this.pattern = pattern;
        }

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
        /** Evaluate it without a key: only rules that need none (per-IP, per-route caps) apply. */
        ALLOW
    }

    /** One tier: the API keys in it and its limit per route class. */
    public static class Tier {

        /**
         * API keys that belong to this tier. A key may belong to one tier only.
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

    /** Where the filter reads who is calling. */
    public static class Identity {

        /**
         * Header carrying the end-user id, set by the authentication in front of the limiter (which must strip
         * client-sent copies).
         */
        private String userHeader = "X-User-Id";

        /**
         * Header carrying the tenant id, set by the authentication in front of the limiter (which must strip
         * client-sent copies).
         */
        private String tenantHeader = "X-Tenant-Id";

        /**
         * Addresses or CIDR blocks of the proxies in front of the gateway (load balancers, ingress controllers), e.g.
         * 10.0.0.0/8. Only when the connecting peer is one of them are the Forwarded / X-Forwarded-For entries they
         * appended believed; everything a client wrote itself is ignored. Empty: the connection's address is the
         * client's.
         */
        private List<String> trustedProxies = new ArrayList<>();

        /**
         * The forwarding header the trusted proxies write: x-forwarded-for (nginx, ingress-nginx, AWS ALB, Envoy) or
         * forwarded (RFC 7239). Only that one is read: a proxy passes the other through as the client wrote it.
         */
        private ClientAddressResolver.Header forwardedHeader = ClientAddressResolver.Header.X_FORWARDED_FOR;

        /**
         * Leading bits of an IPv4 client address that name its bucket: 32 gives each address its own bucket, 24 one
         * per /24 network.
         */
        private int ipv4Prefix = 32;

        /**
         * Leading bits of an IPv6 client address that name its bucket. One subscriber usually holds a whole /64, so
         * a longer prefix would let one client take as many buckets as it has addresses.
         */
        private int ipv6Prefix = 64;

        /**
         * Removed: it believed the n-th X-Forwarded-For entry whoever sent it. Setting it fails the start-up; list the
         * proxies' addresses in trusted-proxies instead.
         */
        private int trustedProxyHops;

        public String getUserHeader() {
            return userHeader;
        }

        public void setUserHeader(String userHeader) {
            this.userHeader = userHeader;
        }

        public String getTenantHeader() {
            return tenantHeader;
        }

        public void setTenantHeader(String tenantHeader) {
            this.tenantHeader = tenantHeader;
        }

        public List<String> getTrustedProxies() {
            return trustedProxies;
        }

        public void setTrustedProxies(List<String> trustedProxies) {
            this.trustedProxies = trustedProxies;
        }

        public ClientAddressResolver.Header getForwardedHeader() {
            return forwardedHeader;
        }

        public void setForwardedHeader(ClientAddressResolver.Header forwardedHeader) {
            this.forwardedHeader = forwardedHeader;
        }

        public int getIpv4Prefix() {
            return ipv4Prefix;
        }

        public void setIpv4Prefix(int ipv4Prefix) {
            this.ipv4Prefix = ipv4Prefix;
        }

        public int getIpv6Prefix() {
            return ipv6Prefix;
        }

        public void setIpv6Prefix(int ipv6Prefix) {
            this.ipv6Prefix = ipv6Prefix;
        }

        @DeprecatedConfigurationProperty(replacement = "ratelimit.identity.trusted-proxies",
                reason = "believed X-Forwarded-For from any peer")
        public int getTrustedProxyHops() {
            return trustedProxyHops;
        }

        public void setTrustedProxyHops(int trustedProxyHops) {
            this.trustedProxyHops = trustedProxyHops;
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

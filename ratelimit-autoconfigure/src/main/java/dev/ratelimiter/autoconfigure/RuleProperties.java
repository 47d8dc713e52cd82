package dev.ratelimiter.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.WhenMissing;

/**
 * One rule as written in configuration or sent to the operator API: a limit, which requests it applies to, and
 * what its buckets are per.
 */
public class RuleProperties extends LimitProperties {

    /**
     * Group the rule competes in: of the matching rules of one group only the most specific applies. Defaults to the
     * rule's own id (the rule always applies when it matches).
     */
    private String group;

    /**
     * Dimensions the rule's buckets are per: api-key, user, tenant, client-ip, route, route-class, tier.
     */
    private List<Dimension> key = new ArrayList<>(List.of(Dimension.API_KEY));

    /**
     * Tokens a request costs under this rule; 0 uses the route's ratelimit-cost metadata (default 1).
     */
    private int cost;

    /**
     * Whether the rule's denials are enforced or only recorded (shadow).
     */
    private Mode mode = Mode.ENFORCE;

    /**
     * Hot-key protection: split each bucket into this many sub-buckets over different Redis slots, each holding
     * limit / shards; callers are hashed to one of them. 1 does not split.
     */
    private int shards = 1;

    /**
     * What the rule does with a request lacking a value of its key (no tenant header for a per-tenant cap): skip (the
     * rule does not apply), shared (all such requests share one bucket) or deny (refused with 400). Default: shared
     * when the key includes user or tenant, else skip.
     */
    private WhenMissing whenMissing;

    /**
     * Whether the rule is in force. A configured rule switched off is still validated, but matches nothing: a profile
     * or a command-line argument can turn off a rule an application.yml defines (a map entry cannot be removed that
     * way). A runtime rule of just {@code enabled=false} turns the rule (or tier default) of that id off on every
     * instance until it is deleted.
     */
    private boolean enabled = true;

    private final Match match = new Match();

    /**
     * Cost of a request as an expression over the request, instead of the fixed cost: the same sandboxed SpEL as
     * identity expressions, e.g. headers['X-Batch-Size'], query['n'], headerLengths['X-Query'] / 100 or
     * contentLength / 1024. Clamped to [1, max-cost]; a value that is no number, negative or failing costs
     * fallback-cost.
     */
    private String costExpression;

    /**
     * Largest cost the cost-expression may give; a larger value is clamped to it. Default: the rule's quota.
     */
    private Integer maxCost;

    /**
     * Cost of a request whose cost-expression gives no usable number (absent, not a number, negative, failing).
     */
    private int fallbackCost = 1;

    private final ChargeFromResponse chargeFromResponse = new ChargeFromResponse();

    public String getCostExpression() {
        return costExpression;
    }

    public void setCostExpression(String costExpression) {
        this.costExpression = costExpression;
    }

    public Integer getMaxCost() {
        return maxCost;
    }

    public void setMaxCost(Integer maxCost) {
        this.maxCost = maxCost;
    }

    public int getFallbackCost() {
        return fallbackCost;
    }

    public void setFallbackCost(int fallbackCost) {
        this.fallbackCost = fallbackCost;
    }

    public ChargeFromResponse getChargeFromResponse() {
        return chargeFromResponse;
    }

    public WhenMissing getWhenMissing() {
        return whenMissing;
    }

    public void setWhenMissing(WhenMissing whenMissing) {
        this.whenMissing = whenMissing;
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public int getShards() {
        return shards;
    }

    public void setShards(int shards) {
        this.shards = shards;
    }

    public String getGroup() {
        return group;
    }

    public void setGroup(String group) {
        this.group = group;
    }

    public List<Dimension> getKey() {
        return key;
    }

    public void setKey(List<Dimension> key) {
        this.key = key;
    }

    public int getCost() {
        return cost;
    }

    public void setCost(int cost) {
        this.cost = cost;
    }

    public Mode getMode() {
        return mode;
    }

    public void setMode(Mode mode) {
        this.mode = mode;
    }

    public Match getMatch() {
        return match;
    }

    /** Which requests a rule applies to; every criterion given must hold, an empty one matches anything. */
    public static class Match {

        /**
         * Gateway route ids.
         */
        private Set<String> routeIds = new LinkedHashSet<>();

        /**
         * Path globs: '*' within a segment, '**' across segments.
         */
        private List<String> paths = new ArrayList<>();

        /**
         * Route classes (route metadata 'route-class').
         */
        private Set<String> routeClasses = new LinkedHashSet<>();

        /**
         * Client tiers.
         */
        private Set<String> tiers = new LinkedHashSet<>();

        /**
         * Specific customers' API keys, as sent or hashed (hmac:<fingerprint>:<client id>, as the rule store holds
         * them and the actuator view shows them): a customer override. Requests are matched by their client id. A
         * token client's key is written with its source, claim:partner-app, as in a tier's api-keys.
         */
        private Set<String> apiKeys = new LinkedHashSet<>();

        public Set<String> getRouteIds() {
            return routeIds;
        }

        public void setRouteIds(Set<String> routeIds) {
            this.routeIds = routeIds;
        }

        public List<String> getPaths() {
            return paths;
        }

        public void setPaths(List<String> paths) {
            this.paths = paths;
        }

        public Set<String> getRouteClasses() {
            return routeClasses;
        }

        public void setRouteClasses(Set<String> routeClasses) {
            this.routeClasses = routeClasses;
        }

        public Set<String> getTiers() {
            return tiers;
        }

        public void setTiers(Set<String> tiers) {
            this.tiers = tiers;
        }

        public Set<String> getApiKeys() {
            return apiKeys;
        }

        public void setApiKeys(Set<String> apiKeys) {
            this.apiKeys = apiKeys;
        }
    }

    /**
     * A rule charged by what the upstream reports it used (an LLM API's tokens): a request is admitted if the bucket
     * holds minimum, which it spends; when the response completes, the reported amount less the minimum is charged,
     * down to a debt of one capacity at most. Token buckets and sliding windows, store-mode exact.
     */
    public static class ChargeFromResponse {

        /**
         * Response header carrying the amount used, e.g. X-Usage-Tokens.
         */
        private String header;

        /**
         * Dotted path of a number in the JSON response body, e.g. usage.total_tokens; read as the body passes,
         * server-sent events included (the last value wins).
         */
        private String jsonField;

        /**
         * Tokens a request must find in the bucket to be admitted, spent up front.
         */
        private int minimum = 1;

        /** Whether the rule is charged from the response at all: a header or a JSON field is named. */
        public boolean configured() {
            return header != null || jsonField != null;
        }

        public String getHeader() {
            return header;
        }

        public void setHeader(String header) {
            this.header = header;
        }

        public String getJsonField() {
            return jsonField;
        }

        public void setJsonField(String jsonField) {
            this.jsonField = jsonField;
        }

        public int getMinimum() {
            return minimum;
        }

        public void setMinimum(int minimum) {
            this.minimum = minimum;
        }
    }
}

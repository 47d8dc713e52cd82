package dev.ratelimiter.autoconfigure.rules;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.CalendarPeriods;
import dev.ratelimiter.core.CalendarQuotaLimit;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.Metering;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.TokenBucketLimit;

/**
 * The rules in force as the {@code ratelimit} endpoint shows them: version, switches, the rule store's state, and
 * each rule's settings with where it came from. API keys are shown hashed, as the rule store holds them, so that a
 * rule read here can be posted back as it is.
 */
public final class RuleView {

    private final RuleSync sync;
    private final ClientIdKeyring keyring;

    public RuleView(RuleSync sync, ClientIdKeyring keyring) {
        this.sync = sync;
        this.keyring = keyring;
    }

    /** The rule in force with that id, or null. */
    public Rule rule(String id) {
        return sync.rulesInForce().rules().get(id);
    }

    public Map<String, Object> describe() {
        RuleSet rules = sync.rulesInForce();
        RuleSync.Status status = sync.status();
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("version", rules.version());
        view.put("killSwitch", rules.killSwitch());
        view.put("defaultTier", rules.defaultTier());
        view.put("shadowTiers", rules.shadowTiers());
        Map<String, Object> store = new LinkedHashMap<>();
        store.put("state", status.state());
        store.put("lastSync", status.lastSync());
        if (status.problem() != null) {
            store.put("problem", status.problem());
        }
        view.put("ruleStore", store);
        Map<String, Object> byId = new LinkedHashMap<>();
        rules.rules().values().forEach(rule -> byId.put(rule.id(), describe(rule)));
        view.put("rules", byId);
        return view;
    }

    public Map<String, Object> describe(Rule rule) {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("source", sync.runtime().specs().containsKey(rule.id()) ? "runtime" : "configuration");
        view.put("group", rule.group());
        Map<String, Object> match = new LinkedHashMap<>();
        putIfNotEmpty(match, "routeIds", rule.match().routeIds());
        putIfNotEmpty(match, "paths", rule.match().paths());
        putIfNotEmpty(match, "routeClasses", rule.match().routeClasses());
        putIfNotEmpty(match, "tiers", rule.match().tiers());
        if (!rule.match().apiKeys().isEmpty()) {
            // Never the keys themselves: hashed, as the rule store holds them, so that a GET can be posted back.
            match.put("apiKeys", rule.match().apiKeys().stream()
                    .map(apiKey -> String.valueOf(keyring.hashed(apiKey))).sorted().toList());
        }
        view.put("match", match);
        view.put("key", rule.key());
        view.putAll(rule.limit().match(LIMIT_VIEW));
        if (rule.cost() > 0) {
            view.put("cost", rule.cost());
        }
        Metering metering = rule.metering();
        if (metering != null && metering.costExpression() != null) {
            view.put("costExpression", metering.costExpression());
            view.put("maxCost", metering.maxCost());
            view.put("fallbackCost", metering.fallbackCost());
        }
        if (rule.responseCharge() != null) {
            Map<String, Object> charge = new LinkedHashMap<>();
            charge.put("header", rule.responseCharge().header());
            charge.put("jsonField", rule.responseCharge().jsonField());
            charge.put("minimum", rule.responseCharge().minimum());
            view.put("chargeFromResponse", charge);
        }
        view.put("mode", rule.mode());
        view.put("failureMode", rule.failureMode());
        view.put("storeMode", rule.storeMode());
        view.put("scope", rule.scope());
        if (rule.shards() > 1) {
            view.put("shards", rule.shards());
        }
        view.put("whenMissing", rule.whenMissing());
        return view;
    }

    /**
     * A limit's settings as the endpoint shows them: its algorithm and the settings of it, under the names a rule
     * spec takes (so that a rule read can be posted back), in this order.
     */
    private static final Limit.Cases<Map<String, Object>> LIMIT_VIEW = new Limit.Cases<>() {

        @Override
        public Map<String, Object> tokenBucket(TokenBucketLimit bucket) {
            Map<String, Object> view = new LinkedHashMap<>();
            view.put("algorithm", "token-bucket");
            view.put("capacity", bucket.capacity());
            view.put("refillTokens", bucket.refillTokens());
            view.put("refillPeriod", bucket.refillPeriod().toString());
            return view;
        }

        @Override
        public Map<String, Object> slidingWindow(SlidingWindowLimit window) {
            Map<String, Object> view = new LinkedHashMap<>();
            view.put("algorithm", "sliding-window");
            view.put("limit", window.limit());
            view.put("window", window.window().toString());
            return view;
        }

        @Override
        public Map<String, Object> concurrency(ConcurrencyLimit concurrency) {
            Map<String, Object> view = new LinkedHashMap<>();
            view.put("algorithm", "concurrency");
            view.put("maxInProgress", concurrency.maxInProgress());
            view.put("lease", concurrency.lease().toString());
            return view;
        }

        @Override
        public Map<String, Object> calendarQuota(CalendarQuotaLimit quota) {
            Map<String, Object> view = new LinkedHashMap<>();
            view.put("algorithm", "calendar-quota");
            view.put("limit", quota.limit());
            view.put("period", quota.unit().name().toLowerCase(java.util.Locale.ROOT));
            view.put("zone", quota.zone().getId());
            // Only the setting its period takes: a rule read is posted back, and the others are refused there.
            if (quota.unit() == CalendarPeriods.Unit.MONTH) {
                view.put("anchorDay", quota.anchorDay());
            }
            if (quota.unit() == CalendarPeriods.Unit.WEEK) {
                view.put("weekStart", quota.weekStart().name().toLowerCase(java.util.Locale.ROOT));
            }
            return view;
        }
    };

    /** The algorithm's name as a rule spec writes it ({@code token-bucket}, {@code sliding-window}, ...). */
    public static String algorithmOf(Limit limit) {
        return (String) limit.match(LIMIT_VIEW).get("algorithm");
    }

    private static void putIfNotEmpty(Map<String, Object> view, String name, Collection<?> values) {
        if (!values.isEmpty()) {
            view.put(name, values);
        }
    }
}

package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.Limit;
import dev.ratelimiter.core.PolicyNames;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.SlidingWindowLimit;
import dev.ratelimiter.core.TokenBucketLimit;

/**
 * The operator's changes to the rules, behind the actuator endpoints: every change is validated against the whole
 * rule set it would produce before anything is written, so a bad rule is refused and the rules in force stay.
 */
public final class RuleAdmin {

    private static final Duration STORE_TIMEOUT = Duration.ofSeconds(2);

    private final RuleStore store;
    private final RuleSync sync;
    private final RuleSetFactory factory;

    RuleAdmin(RuleStore store, RuleSync sync, RuleSetFactory factory) {
        this.store = store;
        this.sync = sync;
        this.factory = factory;
    }

    /** An answer for the endpoint: HTTP status and body. */
    public record Result(int status, Map<String, Object> body) {

        static Result ok(Map<String, Object> body) {
            return new Result(200, body);
        }

        static Result problem(int status, String error, String field, String reason) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", error);
            if (field != null) {
                body.put("field", field);
            }
            body.put("reason", reason);
            return new Result(status, body);
        }
    }

    /** Adds or replaces a runtime rule from its settings as sent (nested maps and lists, relaxed names). */
    public Result put(String id, Map<String, Object> settings) {
        if (!PolicyNames.isValid(id)) {
            return Result.problem(400, "invalid_rule", "id", "Rule ids must be 1 to 128 letters, digits, '.', '_' or "
                    + "'-', starting with a letter or digit; got '" + id + "'.");
        }
        Map<String, String> spec = new LinkedHashMap<>();
        settings.forEach((name, value) -> flatten(name, value, spec));
        try {
            RuleFactory.bind(id, spec);
            sync.preview(specs -> specs.put(id, spec), control -> { });
        }
        catch (InvalidLimitException ex) {
            return Result.problem(400, "invalid_rule", ex.setting(), ex.getMessage());
        }
        return write(() -> store.putRule(id, spec).block(STORE_TIMEOUT), Map.of("id", id));
    }

    public Result delete(String id) {
        if (!sync.runtime().specs().containsKey(id)) {
            if (factory.isConfigured(id)) {
                return Result.problem(409, "configured_rule", null, "Rule '" + id + "' is defined in the application's "
                        + "configuration and cannot be deleted at runtime; put a rule with the same id to change it "
                        + "(for example mode: shadow).");
            }
            return Result.problem(404, "unknown_rule", null, "There is no runtime rule '" + id + "'.");
        }
        return write(() -> store.deleteRule(id).block(STORE_TIMEOUT), Map.of("id", id));
    }

    /** Sets the kill switch or a tier's enforcement flag. */
    public Result control(String name, boolean value) {
        try {
            sync.preview(specs -> { }, control -> control.put(name, String.valueOf(value)));
        }
        catch (InvalidLimitException ex) {
            return Result.problem(400, "invalid_control", ex.setting(), ex.getMessage());
        }
        return write(() -> store.putControl(name, String.valueOf(value)).block(STORE_TIMEOUT),
                Map.of(name, value));
    }

    public RuleSet rulesInForce() {
        return sync.rulesInForce();
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
            // The keys themselves are secrets; say how many, not which.
            match.put("apiKeys", rule.match().apiKeys().size() + " key(s)");
        }
        view.put("match", match);
        view.put("key", rule.key());
        Limit limit = rule.limit();
        if (limit instanceof TokenBucketLimit bucket) {
            view.put("algorithm", "token-bucket");
            view.put("capacity", bucket.capacity());
            view.put("refillTokens", bucket.refillTokens());
            view.put("refillPeriod", bucket.refillPeriod().toString());
        }
        else if (limit instanceof SlidingWindowLimit window) {
            view.put("algorithm", "sliding-window");
            view.put("limit", window.limit());
            view.put("window", window.window().toString());
        }
        else if (limit instanceof ConcurrencyLimit concurrency) {
            view.put("algorithm", "concurrency");
            view.put("maxInProgress", concurrency.maxInProgress());
            view.put("lease", concurrency.lease().toString());
        }
        if (rule.cost() > 0) {
            view.put("cost", rule.cost());
        }
        view.put("mode", rule.mode());
        view.put("failureMode", rule.failureMode());
        view.put("storeMode", rule.storeMode());
        if (rule.shards() > 1) {
            view.put("shards", rule.shards());
        }
        return view;
    }

    private Result write(Runnable write, Map<String, Object> what) {
        try {
            write.run();
        }
        catch (RuntimeException ex) {
            return Result.problem(503, "rule_store_unavailable", null, "The rule store could not be written ("
                    + ex.getMessage() + "); nothing changed.");
        }
        RuleSet now = sync.refresh().block(STORE_TIMEOUT.plusSeconds(1));
        Map<String, Object> body = new LinkedHashMap<>(what);
        body.put("version", now != null ? now.version() : sync.status().version());
        return Result.ok(body);
    }

    private static void putIfNotEmpty(Map<String, Object> view, String name, Collection<?> values) {
        if (!values.isEmpty()) {
            view.put(name, values);
        }
    }

    @SuppressWarnings("unchecked")
    private static void flatten(String name, Object value, Map<String, String> spec) {
        if (value instanceof Map<?, ?> map) {
            ((Map<String, Object>) map).forEach((child, childValue) -> flatten(name + "." + child, childValue, spec));
        }
        else if (value instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                flatten(name + "[" + i + "]", list.get(i), spec);
            }
        }
        else if (value != null) {
            spec.put(name, String.valueOf(value));
        }
    }
}

package dev.ratelimiter.autoconfigure.actuate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.ratelimiter.core.DecisionEvent;
import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RecentDecisions;

/**
 * What {@code /actuator/ratelimit} shows besides the rules: the store and its breaker, the live instances seen, and,
 * from the recent decisions, the most denied clients (hashed ids, never API keys) and the latest decisions.
 */
public final class RateLimitView {

    private static final int MOST_DENIED = 10;
    private static final int LATEST = 20;

    private final RateLimitStore store;
    private final FailSafeStore failSafe;
    private final LiveInstances instances;
    private final RecentDecisions recent;

    /**
     * @param store the store decisions are made with, or null (no store section)
     * @param failSafe the breaker-guarded shared store, or null when buckets live in this instance's memory
     */
    public RateLimitView(RateLimitStore store, FailSafeStore failSafe, LiveInstances instances,
            RecentDecisions recent) {
        this.store = store;
        this.failSafe = failSafe;
        this.instances = instances;
        this.recent = recent;
    }

    void addTo(Map<String, Object> view) {
        if (store != null) {
            Map<String, Object> state = new LinkedHashMap<>();
            state.put("type", failSafe != null ? "redis" : "memory");
            if (failSafe != null) {
                state.put("breaker", failSafe.breaker().state().name());
                state.put("fallbackDecisions", failSafe.fallbackDecisions());
            }
            view.put("store", state);
        }
        if (instances != null) {
            view.put("liveInstances", instances.count());
        }
        if (recent != null) {
            view.put("mostDeniedClients", recent.mostDenied(MOST_DENIED));
            List<Map<String, Object>> latest = new ArrayList<>();
            for (DecisionEvent event : recent.latest(LATEST)) {
                Map<String, Object> decision = new LinkedHashMap<>();
                decision.put("time", event.time().toString());
                putIfPresent(decision, "client", event.client());
                putIfPresent(decision, "tier", event.tier());
                putIfPresent(decision, "route", event.route());
                decision.put("verdict", event.verdict().name().toLowerCase(Locale.ROOT));
                decision.put("source", event.source());
                putIfPresent(decision, "rule", event.rule());
                if (event.remaining() >= 0) {
                    decision.put("remaining", event.remaining());
                }
                putIfPresent(decision, "priority", event.priority());
                putIfPresent(decision, "abuseFactor", event.abuseFactor());
                latest.add(decision);
            }
            view.put("recentDecisions", latest);
        }
    }

    private static void putIfPresent(Map<String, Object> map, String name, Object value) {
        if (value != null) {
            map.put(name, value);
        }
    }
}

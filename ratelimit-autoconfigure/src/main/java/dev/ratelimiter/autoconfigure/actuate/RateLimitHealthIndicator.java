package dev.ratelimiter.autoconfigure.actuate;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.RecentFallbacks;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.StoreBreaker;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The limiter's own health component ({@code rateLimit}). It reports degradation in its details and stays UP
 * (among them how many of the last minute's exact decisions were made without the store, and why the last such one
 * was: {@code timeout}, {@code max-wait}, {@code breaker-open}, {@code not-connected}, {@code error}):
 * a limiter running on its last good rules, or deciding from memory, must not take the gateway out of the load
 * balancer, because the gateway still serves every request.
 */
public final class RateLimitHealthIndicator implements HealthIndicator {

    private final RuleSync sync;
    private final FailSafeStore failSafe;
    private final LiveInstances instances;

    /** @param failSafe the breaker-guarded shared store, or null when buckets live in this instance's memory */
    public RateLimitHealthIndicator(RuleSync sync, FailSafeStore failSafe, LiveInstances instances) {
        this.sync = sync;
        this.failSafe = failSafe;
        this.instances = instances;
    }

    /** Decisions of the last minute, how many were made without the store, and that share (0 to 1, 4 decimals). */
    private static Map<String, Object> lastMinute(RecentFallbacks.Window minute) {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("decisions", minute.decisions());
        view.put("withoutStore", minute.fallbacks());
        view.put("share", Math.round(minute.share() * 10_000) / 10_000.0);
        return view;
    }

    @Override
    public Health health() {
        RuleSync.Status status = sync.status();
        Health.Builder health = Health.up()
                .withDetail("rulesVersion", status.version())
                .withDetail("ruleStore", status.state())
                .withDetail("rulesStale", status.stale())
                .withDetail("killSwitch", sync.rulesInForce().killSwitch())
                .withDetail("liveInstances", instances.count());
        if (failSafe != null) {
            StoreBreaker.State state = failSafe.breaker().state();
            RecentFallbacks.Window minute = failSafe.lastMinute();
            health.withDetail("store", "redis")
                    .withDetail("breaker", state)
                    .withDetail("decidingWithoutStore", state != StoreBreaker.State.CLOSED)
                    .withDetail("fallbackDecisions", failSafe.fallbackDecisions())
                    .withDetail("lastMinute", lastMinute(minute));
            if (minute.lastReason() != null) {
                health.withDetail("lastFallback", Map.of("reason", minute.lastReason().label(),
                        "secondsAgo", TimeUnit.NANOSECONDS.toSeconds(minute.nanosSinceLast())));
            }
        }
        else {
            health.withDetail("store", "memory");
        }
        if (status.lastSync() != null) {
            health.withDetail("lastSync", status.lastSync().toString());
        }
        if (status.problem() != null) {
            health.withDetail("problem", status.problem());
        }
        if (!sync.apiKeyNotes().isEmpty()) {
            health.withDetail("ruleApiKeys", sync.apiKeyNotes());
        }
        return health.build();
    }
}

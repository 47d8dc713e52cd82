package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.StoreBreaker;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The limiter's own health component ({@code rateLimit}). It reports degradation in its details and stays UP:
 * a limiter running on its last good rules, or deciding from memory, must not take the gateway out of the load
 * balancer, because the gateway still serves every request.
 */
final class RateLimitHealthIndicator implements HealthIndicator {

    private final RuleSync sync;
    private final FailSafeStore failSafe;
    private final LiveInstances instances;

    /** @param failSafe the breaker-guarded shared store, or null when buckets live in this instance's memory */
    RateLimitHealthIndicator(RuleSync sync, FailSafeStore failSafe, LiveInstances instances) {
        this.sync = sync;
        this.failSafe = failSafe;
        this.instances = instances;
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
            health.withDetail("store", "redis")
                    .withDetail("breaker", state)
                    .withDetail("decidingWithoutStore", state != StoreBreaker.State.CLOSED)
                    .withDetail("fallbackDecisions", failSafe.fallbackDecisions());
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

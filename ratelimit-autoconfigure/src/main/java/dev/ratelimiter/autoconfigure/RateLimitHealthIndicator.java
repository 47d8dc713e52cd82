package dev.ratelimiter.autoconfigure;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The limiter's own health component ({@code rateLimit}). It reports degradation in its details and stays UP:
 * a limiter running on its last good rules, or deciding from memory, must not take the gateway out of the load
 * balancer, because the gateway still serves every request.
 */
final class RateLimitHealthIndicator implements HealthIndicator {

    private final RuleSync sync;

    RateLimitHealthIndicator(RuleSync sync) {
        this.sync = sync;
    }

    @Override
    public Health health() {
        RuleSync.Status status = sync.status();
        Health.Builder health = Health.up()
                .withDetail("rulesVersion", status.version())
                .withDetail("ruleStore", status.state())
                .withDetail("rulesStale", status.stale())
                .withDetail("killSwitch", sync.rulesInForce().killSwitch());
        if (status.lastSync() != null) {
            health.withDetail("lastSync", status.lastSync().toString());
        }
        if (status.problem() != null) {
            health.withDetail("problem", status.problem());
        }
        return health.build();
    }
}

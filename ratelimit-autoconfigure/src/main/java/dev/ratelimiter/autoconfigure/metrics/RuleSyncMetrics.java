package dev.ratelimiter.autoconfigure.metrics;

import dev.ratelimiter.core.RuleSync;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/** The rule set's version in force, and whether it is stale (the store unreachable or invalid), as gauges. */
public final class RuleSyncMetrics implements MeterBinder {

    private final RuleSync sync;

    public RuleSyncMetrics(RuleSync sync) {
        this.sync = sync;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder("ratelimit.rules.version", sync, s -> s.status().version())
                .description("Version of the rule set in force").register(registry);
        Gauge.builder("ratelimit.rules.stale", sync, s -> s.status().stale() ? 1 : 0)
                .description("1 while the rule store is unreachable or invalid and the last good rules are in force")
                .register(registry);
    }
}

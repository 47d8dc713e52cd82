package dev.ratelimiter.autoconfigure.metrics;

import java.util.function.Supplier;

import dev.ratelimiter.core.FailSafeStore;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The shared store's state as gauges: {@code ratelimit.store.breaker.state}, the circuit breaker in front of it as a
 * number a dashboard can plot (0 closed, 1 open, 2 half-open), and {@code ratelimit.store.fallback.share}, the share of
 * the last minute's exact decisions made without it (0 to 1: above 0, exact mode is not exact right now; the reasons
 * are the {@code reason} tag of {@code ratelimit.fallback.decisions}). Nothing is registered when buckets live in
 * memory, which has neither.
 */
public final class StoreGauges implements MeterBinder {

    private final Supplier<FailSafeStore> failSafe;

    /** @param failSafe the breaker-guarded store, asked when the gauge is bound; null for memory */
    public StoreGauges(Supplier<FailSafeStore> failSafe) {
        this.failSafe = failSafe;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        FailSafeStore store = failSafe.get();
        if (store != null) {
            Gauge.builder("ratelimit.store.breaker.state", store, StoreGauges::state)
                    .description("Circuit breaker in front of the store: 0 closed, 1 open, 2 half-open")
                    .register(registry);
            Gauge.builder("ratelimit.store.fallback.share", store, s -> s.lastMinute().share())
                    .description("Share of the last minute's exact decisions made without the store (0 to 1)")
                    .register(registry);
        }
    }

    private static int state(FailSafeStore failSafe) {
        return switch (failSafe.breaker().state()) {
            case CLOSED -> 0;
            case OPEN -> 1;
            case HALF_OPEN -> 2;
        };
    }
}

package dev.ratelimiter.autoconfigure.metrics;

import java.util.Locale;
import java.util.function.Supplier;

import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.StoreBreaker;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The shared store's state as gauges: {@code ratelimit.store.breaker.state}, the circuit breaker in front of it, one
 * gauge per {@code state} ({@code closed}, {@code open}, {@code half_open}) that is 1 for the current state and 0 for
 * the others (resilience4j's own meters' shape, so one alert on {@code state="open"} reads the same for both), and
 * {@code ratelimit.store.fallback.share}, the share of the last minute's exact decisions made without it (0 to 1:
 * above 0, exact mode is not exact right now; the reasons are the {@code reason} tag of
 * {@code ratelimit.fallback.decisions}). Nothing is registered when buckets live in memory, which has neither.
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
        if (store == null) {
            return;
        }
        for (StoreBreaker.State state : StoreBreaker.State.values()) {
            Gauge.builder("ratelimit.store.breaker.state", store, s -> s.breaker().state() == state ? 1 : 0)
                    .description("1 while the circuit breaker in front of the store is in this state, else 0")
                    .tag("state", state.name().toLowerCase(Locale.ROOT)).register(registry);
        }
        Gauge.builder("ratelimit.store.fallback.share", store, s -> s.lastMinute().share())
                .description("Share of the last minute's exact decisions made without the store (0 to 1)")
                .baseUnit("ratio").register(registry);
    }
}

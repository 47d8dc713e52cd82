package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.FailSafeStore;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.Supplier;

/**
 * {@code ratelimit.store.breaker.state}: the circuit breaker in front of the shared store, as a number a dashboard can
 * plot (0 closed, 1 open, 2 half-open). Nothing is registered when buckets live in memory, which has no breaker.
 */
final class StoreBreakerGauge implements MeterBinder {

    private final Supplier<FailSafeStore> failSafe;

    /** @param failSafe the breaker-guarded store, asked when the gauge is bound; null for memory */
    StoreBreakerGauge(Supplier<FailSafeStore> failSafe) {
        this.failSafe = failSafe;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        FailSafeStore store = failSafe.get();
        if (store != null) {
            Gauge.builder("ratelimit.store.breaker.state", store, StoreBreakerGauge::state)
                    .description("Circuit breaker in front of the store: 0 closed, 1 open, 2 half-open")
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

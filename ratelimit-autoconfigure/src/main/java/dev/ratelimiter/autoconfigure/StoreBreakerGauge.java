package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.StoreStack;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.beans.factory.ObjectProvider;

/**
 * {@code ratelimit.store.breaker.state}: the circuit breaker in front of the shared store, as a number a dashboard can
 * plot (0 closed, 1 open, 2 half-open). Nothing is registered when buckets live in memory, which has no breaker.
 */
final class StoreBreakerGauge implements MeterBinder {

    private final ObjectProvider<StoreStack> stack;

    StoreBreakerGauge(ObjectProvider<StoreStack> stack) {
        this.stack = stack;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        stack.ifAvailable(stores -> Gauge.builder("ratelimit.store.breaker.state", stores.failSafe(),
                        StoreBreakerGauge::state)
                .description("Circuit breaker in front of the store: 0 closed, 1 open, 2 half-open")
                .register(registry));
    }

    private static int state(FailSafeStore failSafe) {
        return switch (failSafe.breaker().state()) {
            case CLOSED -> 0;
            case OPEN -> 1;
            case HALF_OPEN -> 2;
        };
    }
}

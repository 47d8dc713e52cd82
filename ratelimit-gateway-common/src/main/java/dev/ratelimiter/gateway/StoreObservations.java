package dev.ratelimiter.gateway;

import dev.ratelimiter.core.RateLimitStore;
import io.micrometer.observation.ObservationRegistry;

/** Puts a {@link RateLimitObservation#STORE} observation around each call of a store, or leaves the store alone. */
public final class StoreObservations {

    /** No observations. */
    public static final StoreObservations OFF = new StoreObservations(ObservationRegistry.NOOP, null);

    private final ObservationRegistry registry;
    private final StoreObservationConvention custom;

    /** @param custom the application's convention, or null for {@link DefaultStoreObservationConvention} */
    public StoreObservations(ObservationRegistry registry, StoreObservationConvention custom) {
        this.registry = registry;
        this.custom = custom;
    }

    /** {@code store} observed; {@code store} itself when the registry records nothing. */
    public RateLimitStore observe(RateLimitStore store) {
        return registry.isNoop() ? store : new ObservedStore(store, registry, custom);
    }
}

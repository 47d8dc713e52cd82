package dev.ratelimiter.gateway;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/** The name and keys of a store call's observation; a bean of this type replaces the default. */
public interface StoreObservationConvention extends ObservationConvention<StoreObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof StoreObservationContext;
    }
}

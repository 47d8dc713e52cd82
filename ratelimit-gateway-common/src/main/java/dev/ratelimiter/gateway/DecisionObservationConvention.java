package dev.ratelimiter.gateway;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The name and keys of a decision's observation. Declare a bean of this type to replace
 * {@link DefaultDecisionObservationConvention} (extending it to add keys); an {@code ObservationFilter} may change
 * the keys of every convention.
 */
public interface DecisionObservationConvention extends ObservationConvention<DecisionObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof DecisionObservationContext;
    }
}

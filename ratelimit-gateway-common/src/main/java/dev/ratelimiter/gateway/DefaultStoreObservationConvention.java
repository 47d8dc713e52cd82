package dev.ratelimiter.gateway;

import dev.ratelimiter.gateway.RateLimitObservation.StoreKeys;
import io.micrometer.common.KeyValues;

/** {@code ratelimit.store}, keyed by how the call ended. */
public class DefaultStoreObservationConvention implements StoreObservationConvention {

    public static final String NAME = "ratelimit.store";

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(StoreObservationContext context) {
        return "ratelimit store";
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(StoreObservationContext context) {
        StoreObservationContext.Outcome outcome = context.getOutcome();
        return KeyValues.of(StoreKeys.OUTCOME.withValue(outcome == null ? RateLimitObservation.NONE
                : outcome.label()));
    }
}

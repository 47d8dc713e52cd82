package dev.ratelimiter.autoconfigure.store;

import dev.ratelimiter.autoconfigure.StoreProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The start-up warning of a Redis-backed limiter left at {@code ratelimit.store.expected-instances: 1} by default. An
 * instance that starts while Redis cannot be reached counts no other instance, so it takes each whole limit as its
 * fallback share: a fleet started during an outage lets every client have its limit once per instance. Said once,
 * with the setting; a 1 that was set on purpose (a single instance) is not warned about.
 */
public final class FleetSizeWarning {

    public static final String SETTING = "ratelimit.store.expected-instances";

    private static final Logger logger = LoggerFactory.getLogger(FleetSizeWarning.class);

    private FleetSizeWarning() {
    }

    /** Whether the warning was logged. */
    public static boolean warnIfUnset(Environment environment, StoreProperties store) {
        if (store.getExpectedInstances() != 1 || Binder.get(environment).bind(SETTING, Integer.class).isBound()) {
            return false;
        }
        logger.warn("{} is not set, so it is 1: an instance that starts while Redis cannot be reached assumes it is "
                + "the only one and lets each client have the whole limit from its own memory, so N instances started "
                + "during an outage admit up to N times every limit until Redis answers. Set it to the fleet's usual "
                + "size (the Helm chart sets the replica count; with an autoscaler, its maximum), or to 1 for a single "
                + "instance.", SETTING);
        return true;
    }
}

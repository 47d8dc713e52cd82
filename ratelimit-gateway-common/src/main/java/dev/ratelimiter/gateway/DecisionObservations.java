package dev.ratelimiter.gateway;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import reactor.util.context.ContextView;

/**
 * Starts the {@link RateLimitObservation#DECISION} observation of each decision, or nothing at all: without a
 * registry that records anything ({@link ObservationRegistry#isNoop()}, asked once, here) a decision makes no
 * observation, no context, no extra operator.
 */
public final class DecisionObservations {

    /** No observations. */
    public static final DecisionObservations OFF = new DecisionObservations(ObservationRegistry.NOOP, null, null);

    private final ObservationRegistry registry;
    private final DecisionObservationConvention custom;
    private final DecisionObservationConvention defaults;
    private final boolean enabled;

    /**
     * @param custom the application's convention, or null for {@code defaults}
     * @param defaults the convention when the application has none
     */
    public DecisionObservations(ObservationRegistry registry, DecisionObservationConvention custom,
            DecisionObservationConvention defaults) {
        this.registry = registry;
        this.custom = custom;
        this.defaults = defaults;
        this.enabled = !registry.isNoop();
    }

    /** Whether decisions are observed: a flavour asks for the parent observation only then. */
    public boolean enabled() {
        return enabled;
    }

    /**
     * The parent a reactive request carries in its Reactor context (Spring WebFlux puts its server request
     * observation there), or null.
     */
    public static Observation parentIn(ContextView context) {
        return context.getOrDefault(ObservationThreadLocalAccessor.KEY, null);
    }

    /**
     * A started observation of one decision, or null when decisions are not observed.
     *
     * @param parent the request's observation; null: the registry's current one (Server MVC's, on the request thread)
     */
    DecisionObservation start(Observation parent) {
        if (!enabled) {
            return null;
        }
        DecisionObservationContext context = new DecisionObservationContext();
        if (parent != null) {
            context.setParentObservation(parent);
        }
        Observation observation = RateLimitObservation.DECISION.observation(custom, defaults, () -> context,
                registry);
        return new DecisionObservation(observation.start(), context);
    }
}

package dev.ratelimiter.gateway;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.Verdict;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/**
 * The shared store with a {@link RateLimitObservation#STORE} observation around each call, a child of the decision's
 * observation found in the call's Reactor context. Put under the timeout and the breaker (as the shared store of a
 * {@code StoreStack}), so a call the breaker spares is not observed, and one the timeout abandons ends cancelled.
 * Made by {@link StoreObservations#observe}.
 */
final class ObservedStore implements RateLimitStore {

    private final RateLimitStore store;
    private final ObservationRegistry registry;
    private final StoreObservationConvention custom;
    private final StoreObservationConvention defaults = new DefaultStoreObservationConvention();

    ObservedStore(RateLimitStore store, ObservationRegistry registry, StoreObservationConvention custom) {
        this.store = store;
        this.registry = registry;
        this.custom = custom;
    }

    @Override
    public Mono<Verdict> evaluate(List<Check> checks) {
        return Mono.deferContextual(reactor -> {
            StoreObservationContext context = new StoreObservationContext(checks.size());
            Observation parent = reactor.getOrDefault(ObservationThreadLocalAccessor.KEY, null);
            if (parent != null) {
                context.setParentObservation(parent);
            }
            Observation observation = RateLimitObservation.STORE.observation(custom, defaults, () -> context,
                    registry).start();
            AtomicBoolean stopped = new AtomicBoolean();
            Runnable stop = () -> {
                if (stopped.compareAndSet(false, true)) {
                    observation.stop();
                }
            };
            return Mono.defer(() -> store.evaluate(checks))
                    // stopped before the verdict goes on: the decision judged downstream ends after its store call,
                    // so the call's span lies within the decision's
                    .doOnNext(verdict -> {
                        context.setOutcome(StoreObservationContext.Outcome.ANSWERED);
                        stop.run();
                    })
                    .doOnError(failure -> {
                        context.setOutcome(StoreObservationContext.Outcome.ERROR);
                        observation.error(failure);
                        stop.run();
                    })
                    .doFinally(signal -> {
                        if (signal == SignalType.CANCEL && !stopped.get()) {
                            context.setOutcome(StoreObservationContext.Outcome.CANCELLED);
                        }
                        stop.run();
                    })
                    // the store client's own observations (Lettuce's, where the application has them) below this one
                    .contextWrite(inner -> inner.put(ObservationThreadLocalAccessor.KEY, observation));
        });
    }

    @Override
    public <T> Optional<T> find(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : store.find(type);
    }
}

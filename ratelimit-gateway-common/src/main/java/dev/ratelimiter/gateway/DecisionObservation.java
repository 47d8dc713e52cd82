package dev.ratelimiter.gateway;

import java.util.concurrent.atomic.AtomicBoolean;

import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Verdict;
import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import reactor.core.publisher.Mono;

/**
 * One decision's observation while it runs: stopped once, when the verdict is judged, when the request is refused
 * before any rule is asked, or when the request ends without either (the client went away).
 */
final class DecisionObservation {

    private final Observation observation;
    private final DecisionObservationContext context;
    // The verdict is judged on the request's thread or event loop, the end may come from a cancel on another.
    private final AtomicBoolean stopped = new AtomicBoolean();

    DecisionObservation(Observation observation, DecisionObservationContext context) {
        this.observation = observation;
        this.context = context;
    }

    /** The store's verdict with this observation as the parent of what it calls (the store's own observation). */
    Mono<Verdict> around(Mono<Verdict> verdict) {
        return verdict.contextWrite(reactor -> reactor.put(ObservationThreadLocalAccessor.KEY, observation));
    }

    void request(RequestAttributes request) {
        context.setRequest(request);
    }

    void refusedUpFront(RefusalAnswer refusal) {
        context.setRefusal(refusal);
        stop();
    }

    void undecided() {
        context.setUndecided();
    }

    void judged(Verdict verdict, RefusalAnswer refusal) {
        context.setVerdict(verdict);
        context.setRefusal(refusal);
        stop();
    }

    /** The decision failed (a listener or the limiter threw): stopped with the error, which the caller rethrows. */
    void failed(Throwable error) {
        if (!stopped.get()) {
            observation.error(error);
            stop();
        }
    }

    /** The request ended: a decision not judged by then is cancelled. */
    void ended() {
        if (!stopped.get()) {
            context.setCancelled();
            stop();
        }
    }

    private void stop() {
        if (stopped.compareAndSet(false, true)) {
            observation.stop();
        }
    }
}

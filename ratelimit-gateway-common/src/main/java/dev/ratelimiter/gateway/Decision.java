package dev.ratelimiter.gateway;

import java.util.function.Supplier;

import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Verdict;
import org.springframework.http.HttpHeaders;
import reactor.core.publisher.Mono;

/**
 * What {@link Admission#decide} made of a request: refused before any store was asked ({@link #refusal()} not null),
 * or waiting for the store's {@link #verdict()}, which the flavour awaits its own way (WebFlux subscribes on the
 * request's event loop, Server MVC blocks its request thread up to a bound) and then {@linkplain #judge judges}.
 */
public final class Decision {

    private final Admission admission;
    private final RefusalAnswer refusal;
    private final RequestAttributes request;
    private final Mono<Verdict> verdict;
    private final Supplier<Verdict> undecided;
    /** Null when decisions are not observed: then nothing here costs a thing. */
    private final DecisionObservation observation;

    private Decision(Admission admission, RefusalAnswer refusal, RequestAttributes request, Mono<Verdict> verdict,
            Supplier<Verdict> undecided, DecisionObservation observation) {
        this.admission = admission;
        this.refusal = refusal;
        this.request = request;
        this.verdict = verdict;
        this.undecided = undecided;
        this.observation = observation;
    }

    static Decision refused(Admission admission, RefusalAnswer refusal, DecisionObservation observation) {
        if (observation != null) {
            observation.refusedUpFront(refusal);
        }
        return new Decision(admission, refusal, null, null, null, null);
    }

    static Decision checking(Admission admission, RequestAttributes request, Mono<Verdict> verdict,
            Supplier<Verdict> undecided, DecisionObservation observation) {
        if (observation == null) {
            return new Decision(admission, null, request, verdict, undecided, null);
        }
        observation.request(request);
        return new Decision(admission, null, request, observation.around(verdict), undecided, observation);
    }

    /** The answer given before the store was asked (400, 401, 403), or null when the store decides. */
    public RefusalAnswer refusal() {
        return refusal;
    }

    /** The request as the rules see it; null when it was refused up front. */
    public RequestAttributes request() {
        return request;
    }

    /**
     * The store's verdict, lazily: nothing is asked before a subscription. It never fails: a failure (a bug, since the
     * store stack falls back on store failures itself) is logged and decided by the rules' failure modes.
     */
    public Mono<Verdict> verdict() {
        return verdict;
    }

    /** The verdict when the store's does not come in time: the rules' failure modes without the store. */
    public Verdict undecided() {
        if (observation != null) {
            observation.undecided();
        }
        return undecided.get();
    }

    /**
     * Reports the verdict and writes the rate-limit fields on {@code responseHeaders}; the answer to give instead of
     * forwarding the request (429, 503, 400), or null when it goes on.
     */
    public RefusalAnswer judge(Verdict verdict, HttpHeaders responseHeaders) {
        RefusalAnswer refused;
        try {
            refused = admission.judge(request, verdict, responseHeaders);
        }
        catch (RuntimeException | Error ex) {
            // a verdict listener of the application's threw: the observation ends with the error, not open forever
            if (observation != null) {
                observation.failed(ex);
            }
            throw ex;
        }
        if (observation != null) {
            observation.judged(verdict, refused);
        }
        return refused;
    }

    /**
     * Tells the decision that its request ended, however: a decision that was never judged (the client went away
     * while the store was asked) has its observation stopped as cancelled. Nothing to do when it was judged.
     */
    public void ended() {
        if (observation != null) {
            observation.ended();
        }
    }
}

package dev.ratelimiter.gateway;

import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Verdict;
import io.micrometer.observation.Observation;

/**
 * What a {@link RateLimitObservation#DECISION} observation knows of its decision, for a
 * {@link DecisionObservationConvention} to turn into keys. Filled in as the decision goes: the request once the
 * admission pipeline has made it, the verdict and the refusal once judged.
 */
public final class DecisionObservationContext extends Observation.Context {

    private RequestAttributes request;
    private Verdict verdict;
    private RefusalAnswer refusal;
    private boolean undecided;
    private boolean cancelled;

    DecisionObservationContext() {
    }

    /** The request as the rules saw it; null when it was refused before (an identity refusal). */
    public RequestAttributes getRequest() {
        return request;
    }

    void setRequest(RequestAttributes request) {
        this.request = request;
    }

    /** The verdict judged; null when the request was refused before any rule was asked, or left first. */
    public Verdict getVerdict() {
        return verdict;
    }

    void setVerdict(Verdict verdict) {
        this.verdict = verdict;
    }

    /** The answer given instead of forwarding the request (400 to 503); null when it went on. */
    public RefusalAnswer getRefusal() {
        return refusal;
    }

    void setRefusal(RefusalAnswer refusal) {
        this.refusal = refusal;
    }

    /**
     * Whether the gateway stopped waiting for the store stack (Server MVC's wait bound) and decided by the rules'
     * failure modes.
     */
    public boolean isUndecided() {
        return undecided;
    }

    void setUndecided() {
        this.undecided = true;
    }

    /** Whether the request ended (the client went away) before its verdict was judged. */
    public boolean isCancelled() {
        return cancelled;
    }

    void setCancelled() {
        this.cancelled = true;
    }
}

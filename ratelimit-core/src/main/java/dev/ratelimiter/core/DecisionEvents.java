package dev.ratelimiter.core;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns verdicts (and shed requests) into {@link DecisionEvent}s and hands them to an {@link EventQueue}. Runs on
 * the request path: it builds one small object and offers it to a bounded queue, never more.
 */
public final class DecisionEvents implements VerdictListener {

    private final EventQueue queue;
    private final Clock clock;
    private final String instance;
    private final String region;
    private final ClientIds clientIds;
    private final AbuseScores abuse;

    /**
     * @param clientIds the hash that names clients in events: the same as the evaluator's, so that an event's client
     * is the partition of that client's buckets
     */
    public DecisionEvents(EventQueue queue, Clock clock, String instance, String region, ClientIds clientIds) {
        this(queue, clock, instance, region, clientIds, null);
    }

    /** @param abuse the scores whose factor an event shows when it scaled the client's limits; null: none */
    public DecisionEvents(EventQueue queue, Clock clock, String instance, String region, ClientIds clientIds,
            AbuseScores abuse) {
        this.abuse = abuse;
        this.queue = queue;
        this.clientIds = clientIds;
        this.clock = clock;
        this.instance = instance;
        this.region = region;
    }

    @Override
    public void onVerdict(RequestAttributes request, Verdict verdict) {
        queue.offer(of(request, verdict));
    }

    @Override
    public void onShed(RequestAttributes request, Priority priority, String upstream) {
        queue.offer(new DecisionEvent(clock.instant(), client(request), request.tier(), request.routeId(),
                request.routeClass(), DecisionEvent.Verdict.SHED, "evaluated", "none", null, -1, -1, List.of(),
                priority.label(), upstream, instance, region));
    }

    DecisionEvent of(RequestAttributes request, Verdict verdict) {
        List<DecisionEvent.RuleResult> rules = new ArrayList<>(verdict.outcomes().size());
        for (RuleOutcome outcome : verdict.outcomes()) {
            rules.add(new DecisionEvent.RuleResult(outcome.rule().id(), outcome.allowed(), outcome.remaining(),
                    outcome.check().shadow()));
        }
        RuleOutcome limiting = verdict.limiting().orElse(null);
        String client = client(request);
        return new DecisionEvent(clock.instant(), client, request.tier(), request.routeId(),
                request.routeClass(), verdictOf(verdict), verdict.reason().label(),
                verdict.source().label(), limiting == null ? null : limiting.rule().id(),
                limiting == null ? -1 : limiting.rule().limit().quota(), limiting == null ? -1 : limiting.remaining(),
                rules, null, null, instance, region, abuseFactor(client, request, verdict));
    }

    /** The client's factor, when it scaled one of the rules decided (the evaluator's own test, {@link AbuseScores#scales}). */
    private Double abuseFactor(String client, RequestAttributes request, Verdict verdict) {
        if (abuse == null || client == null || abuse.held() == 0) {
            return null;
        }
        double factor = abuse.factorFor(client);
        if (factor >= 1) {
            return null;
        }
        for (RuleOutcome outcome : verdict.outcomes()) {
            if (abuse.scales(outcome.rule(), request.tier())) {
                return factor;
            }
        }
        return null;
    }

    private static DecisionEvent.Verdict verdictOf(Verdict verdict) {
        if (verdict.reason() == Verdict.Reason.STORE_UNAVAILABLE) {
            return DecisionEvent.Verdict.UNAVAILABLE;
        }
        if (!verdict.allowed()) {
            return DecisionEvent.Verdict.DENIED;
        }
        return verdict.shadowDenials().isEmpty() ? DecisionEvent.Verdict.ALLOWED : DecisionEvent.Verdict.SHADOW_DENIED;
    }

    private String client(RequestAttributes request) {
        return request.apiKey() == null ? null : clientIds.of(request.apiKey());
    }
}

package dev.ratelimiter.autoconfigure.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.VerdictListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts verdicts:
 * <ul>
 * <li>{@code ratelimit.decisions} by {@code outcome} (allowed, denied, unavailable, unlimited), {@code rule} (the
 * limiting rule, or {@code none}), {@code route_class} and {@code tier};</li>
 * <li>{@code ratelimit.near.limit} by rule: allowed requests that left the limiting rule under 20 % of its quota —
 * the clients about to be refused;</li>
 * <li>{@code ratelimit.shadow.denials} by rule: would-be denials of rules in shadow.</li>
 * </ul>
 * Tags are bounded: rule ids, tiers and route classes come from configuration, never from a request; an API key or
 * client id is never a tag.
 */
public final class MicrometerVerdictListener implements VerdictListener {

    private static final double NEAR_LIMIT = 0.2;

    private final MeterRegistry registry;
    private final Map<DecisionKey, Counter> decisions = new ConcurrentHashMap<>();

    /** What a decision counter is per; a small key rather than a joined string, hashed from its parts' own hashes. */
    private record DecisionKey(String outcome, String rule, String routeClass, String tier) {
    }

    public MicrometerVerdictListener(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onVerdict(RequestAttributes request, Verdict verdict) {
        RuleOutcome limiting = verdict.limiting().orElse(null);
        String rule = limiting == null ? "none" : limiting.rule().id();
        decisions(outcome(verdict), rule, request.routeClass(), request.tier()).increment();
        if (verdict.allowed() && limiting != null
                && limiting.remaining() < NEAR_LIMIT * limiting.rule().limit().quota()) {
            registry.counter("ratelimit.near.limit", "rule", rule).increment();
        }
        for (RuleOutcome outcome : verdict.shadowDenials()) {
            registry.counter("ratelimit.shadow.denials", "rule", outcome.rule().id()).increment();
        }
    }

    private static String outcome(Verdict verdict) {
        if (verdict.reason() == Verdict.Reason.STORE_UNAVAILABLE) {
            return "unavailable";
        }
        if (verdict.reason() == Verdict.Reason.MISSING_IDENTITY) {
            return "denied";
        }
        if (verdict.reason() != Verdict.Reason.EVALUATED) {
            return "unlimited";
        }
        return verdict.allowed() ? "allowed" : "denied";
    }

    private Counter decisions(String outcome, String rule, String routeClass, String tier) {
        String routeClassTag = routeClass == null ? "none" : routeClass;
        String tierTag = tier == null ? "none" : tier;
        DecisionKey key = new DecisionKey(outcome, rule, routeClassTag, tierTag);
        Counter counter = decisions.get(key);
        if (counter != null) {
            return counter;
        }
        return decisions.computeIfAbsent(key, k -> Counter.builder("ratelimit.decisions")
                .description("Rate-limit decisions by outcome, limiting rule, route class and tier")
                .tags("outcome", outcome, "rule", rule, "route_class", routeClassTag, "tier", tierTag)
                .register(registry));
    }
}

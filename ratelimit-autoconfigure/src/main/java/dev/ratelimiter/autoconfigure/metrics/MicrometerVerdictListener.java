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
 * limiting rule's {@linkplain RuleTags tag}, or {@code none}), {@code route_class} and {@code tier};</li>
 * <li>{@code ratelimit.near.limit} by rule: allowed requests that left the limiting rule under 20 % of its quota —
 * the clients about to be refused;</li>
 * <li>{@code ratelimit.shadow.denials} by rule: would-be denials of rules in shadow.</li>
 * </ul>
 * Tags are bounded: rule tags, tiers and route classes come from configuration, never from a request; an API key or
 * client id is never a tag. The meters of a rule tag no rule in force has any more are removed as the rules change
 * ({@link #rulesChanged}).
 */
public final class MicrometerVerdictListener implements VerdictListener {

    private static final double NEAR_LIMIT = 0.2;

    private final MeterRegistry registry;
    private final RuleTags tags;
    private final Map<CounterKey, Counter> counters = new ConcurrentHashMap<>();

    /** One counter: a small key rather than a joined string; null parts are tags the meter does not have. */
    private record CounterKey(Kind kind, String rule, String outcome, String routeClass, String tier) {
    }

    private enum Kind {
        DECISIONS("ratelimit.decisions", "decisions",
                "Rate-limit decisions by outcome, limiting rule, route class and tier"),
        NEAR_LIMIT("ratelimit.near.limit", "requests",
                "Allowed requests that left their limiting rule under 20 % of its quota"),
        SHADOW_DENIALS("ratelimit.shadow.denials", "denials", "Would-be denials of rules in shadow");

        final String meter;
        final String unit;
        final String description;

        Kind(String meter, String unit, String description) {
            this.meter = meter;
            this.unit = unit;
            this.description = description;
        }
    }

    public MicrometerVerdictListener(MeterRegistry registry, RuleTags tags) {
        this.registry = registry;
        this.tags = tags;
    }

    @Override
    public void onVerdict(RequestAttributes request, Verdict verdict) {
        RuleOutcome limiting = verdict.limiting().orElse(null);
        String rule = limiting == null ? RuleTags.NONE : tags.of(limiting.rule());
        increment(new CounterKey(Kind.DECISIONS, rule, outcome(verdict), orNone(request.routeClass()),
                orNone(request.tier())));
        if (verdict.allowed() && limiting != null
                && limiting.remaining() < NEAR_LIMIT * limiting.rule().limit().quota()) {
            increment(new CounterKey(Kind.NEAR_LIMIT, rule, null, null, null));
        }
        for (RuleOutcome outcome : verdict.shadowDenials()) {
            increment(new CounterKey(Kind.SHADOW_DENIALS, tags.of(outcome.rule()), null, null, null));
        }
    }

    /** Takes the rule set now in force, and removes the meters of rule tags it no longer has. */
    public void rulesChanged() {
        tags.update();
        for (CounterKey key : counters.keySet()) {
            removeIfGone(key);
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

    private static String orNone(String value) {
        return value == null ? "none" : value;
    }

    private void increment(CounterKey key) {
        Counter counter = counters.get(key);
        if (counter == null) {
            counter = counters.computeIfAbsent(key, this::register);
            // A verdict decided under rules just replaced may register its rule's meter after the sweep of that
            // change looked: registered first, then checked, so that either this check or the sweep removes it.
            removeIfGone(key);
        }
        counter.increment();
    }

    /** Removes a counter whose rule tag is not live; atomic with its registration, so a live one is never removed. */
    private void removeIfGone(CounterKey key) {
        if (tags.isLive(key.rule())) {
            return;
        }
        counters.computeIfPresent(key, (k, counter) -> {
            if (tags.isLive(k.rule())) {
                return counter;
            }
            registry.remove(counter);
            return null;
        });
    }

    private Counter register(CounterKey key) {
        Counter.Builder builder = Counter.builder(key.kind().meter).description(key.kind().description)
                .baseUnit(key.kind().unit).tag("rule", key.rule());
        if (key.kind() == Kind.DECISIONS) {
            builder.tags("outcome", key.outcome(), "route_class", key.routeClass(), "tier", key.tier());
        }
        return builder.register(registry);
    }
}

package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.VerdictListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts verdicts: {@code ratelimit.decisions} by outcome (allowed, denied, unlimited) and
 * {@code ratelimit.shadow.denials} by rule, the would-be denials of rules in shadow mode. Tags are bounded: rule
 * ids and fixed words, never an API key.
 */
final class MicrometerVerdictListener implements VerdictListener {

    private final MeterRegistry registry;
    private final Counter allowed;
    private final Counter denied;
    private final Counter unlimited;

    MicrometerVerdictListener(MeterRegistry registry) {
        this.registry = registry;
        this.allowed = decisions("allowed");
        this.denied = decisions("denied");
        this.unlimited = decisions("unlimited");
    }

    private Counter decisions(String outcome) {
        return Counter.builder("ratelimit.decisions").description("Rate-limit decisions by outcome")
                .tag("outcome", outcome).register(registry);
    }

    @Override
    public void onVerdict(RequestAttributes request, Verdict verdict) {
        if (verdict.reason() != Verdict.Reason.EVALUATED) {
            unlimited.increment();
        }
        else if (verdict.allowed()) {
            allowed.increment();
        }
        else {
            denied.increment();
        }
        for (RuleOutcome outcome : verdict.shadowDenials()) {
            registry.counter("ratelimit.shadow.denials", "rule", outcome.rule().id()).increment();
        }
    }
}

package dev.ratelimiter.testsupport;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a test reads of a gateway's exact-mode limiter, whatever the gateway's flavour: how many decisions it asked the
 * shared store for, how many of them it made without the store and why, and its circuit breaker. Each test module
 * implements it over its gateway's beans (the fail-safe store of the {@code StoreStack} and the meter registry);
 * this module knows neither.
 */
public interface LimiterProbe {

    /** The reasons a decision is made without the store, as the {@code reason} tag of the fallback meter names them. */
    List<String> REASONS = List.of("timeout", "max-wait", "breaker-open", "not-connected", "error");

    /** Exact decisions that went to the fail-safe store since start: store calls of every outcome, refused ones too. */
    long decisions();

    /** Of those, decided without the store since start ({@code FailSafeStore#fallbackDecisions()}). */
    long fallbackDecisions();

    /** Rules decided without the store for {@code reason} since start (a decision counts once per rule it checks). */
    long fallbackRules(String reason);

    /** The breaker in front of the store: {@code CLOSED}, {@code OPEN} or {@code HALF_OPEN}. */
    String breakerState();

    /** The last minute as the health component shows it, for the test's log. */
    String lastMinute();

    default Snapshot snapshot() {
        Map<String, Long> byReason = new LinkedHashMap<>();
        for (String reason : REASONS) {
            byReason.put(reason, fallbackRules(reason));
        }
        return new Snapshot(decisions(), fallbackDecisions(), byReason);
    }

    /**
     * The counts at one moment, or (from {@link #since}) over a period.
     *
     * @param decisions exact decisions
     * @param fallbacks of which made without the store
     * @param rulesByReason rules decided without the store, by reason
     */
    record Snapshot(long decisions, long fallbacks, Map<String, Long> rulesByReason) {

        /** What happened between {@code earlier} and this. */
        public Snapshot since(Snapshot earlier) {
            Map<String, Long> byReason = new LinkedHashMap<>();
            rulesByReason.forEach((reason, count) -> byReason.put(reason,
                    count - earlier.rulesByReason.getOrDefault(reason, 0L)));
            return new Snapshot(decisions - earlier.decisions, fallbacks - earlier.fallbacks, byReason);
        }

        /** Share of the decisions made without the store (0 with no decisions). */
        public double share() {
            return decisions == 0 ? 0 : (double) fallbacks / decisions;
        }

        public long rules(String reason) {
            return rulesByReason.getOrDefault(reason, 0L);
        }

        @Override
        public String toString() {
            Map<String, Long> seen = new LinkedHashMap<>();
            rulesByReason.forEach((reason, count) -> {
                if (count != 0) {
                    seen.put(reason, count);
                }
            });
            return String.format("%,d decisions, %,d without the store (%.4f %%), rules by reason %s", decisions,
                    fallbacks, share() * 100, seen);
        }
    }
}

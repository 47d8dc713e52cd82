package dev.ratelimiter.rollup;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * One client's running totals for one hour: the aggregate kept in the window store.
 *
 * <p>Mutable on purpose: Kafka Streams hands the aggregator a freshly deserialized instance for every record, so
 * adding in place is safe and saves a copy per event.
 */
final class HourlyUsage {

    /** Rule name counted for a {@code denied} event that does not name its rule. */
    static final String NO_RULE = "none";

    private String tier;

    private long requests;

    private long allowed;

    private long denied;

    private long shadowDenied;

    /** Sorted so that the output is stable and easy to compare. */
    private final Map<String, Long> deniedByRule = new TreeMap<>();

    HourlyUsage() {
    }

    HourlyUsage(String tier, long requests, long allowed, long denied, long shadowDenied,
            Map<String, Long> deniedByRule) {
        this.tier = tier;
        this.requests = requests;
        this.allowed = allowed;
        this.denied = denied;
        this.shadowDenied = shadowDenied;
        this.deniedByRule.putAll(deniedByRule);
    }

    /** Counts one more decision; returns this, in the shape Kafka Streams' aggregator wants. */
    HourlyUsage add(DecisionEvent event) {
        if (event.tier() != null) {
            // "The client's tier in its latest event of the hour": events of one client arrive in order on one
            // partition, so the last one seen is the latest.
            this.tier = event.tier();
        }
        this.requests++;
        Verdict verdict = event.verdict();
        if (verdict.countsAsAllowed()) {
            this.allowed++;
        }
        if (verdict == Verdict.SHADOW_DENIED) {
            this.shadowDenied++;
        }
        if (verdict.countsAsDenied()) {
            this.denied++;
        }
        if (verdict == Verdict.DENIED) {
            String rule = (event.rule() != null) ? event.rule() : NO_RULE;
            this.deniedByRule.merge(rule, 1L, Long::sum);
        }
        return this;
    }

    String tier() {
        return this.tier;
    }

    long requests() {
        return this.requests;
    }

    long allowed() {
        return this.allowed;
    }

    long denied() {
        return this.denied;
    }

    long shadowDenied() {
        return this.shadowDenied;
    }

    Map<String, Long> deniedByRule() {
        return Collections.unmodifiableMap(this.deniedByRule);
    }
}

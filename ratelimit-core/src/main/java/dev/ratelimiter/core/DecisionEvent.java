package dev.ratelimiter.core;

import java.time.Instant;
import java.util.List;

/**
 * One decision, for later review: what was asked, what was decided, where. Version {@value #SCHEMA} of the schema
 * documented in {@code src/docs/decision-events.md}; {@link DecisionEventJson} writes it.
 *
 * @param time when the decision was made
 * @param client the client's stable id — {@link ClientIds#of} of its API key, never the key — or {@code null}
 * @param tier the client's tier, or {@code null}
 * @param route the gateway route id, or {@code null}
 * @param routeClass the route class, or {@code null}
 * @param verdict what was decided
 * @param reason why no rule was consulted, or {@code evaluated}
 * @param source where it was decided: {@code store}, {@code local}, {@code fallback} (the store could not answer),
 * {@code none}
 * @param rule the limiting rule (the denying one, else the one with least left), or {@code null}
 * @param limit that rule's quota, or -1
 * @param remaining what that rule has left, or -1
 * @param rules every rule that applied
 * @param priority for a shed request, its priority; else {@code null}
 * @param upstream for a shed request, the upstream it was shed from; else {@code null}
 * @param instance the gateway instance
 * @param region the instance's region, or {@code null}
 * @param abuseFactor the factor the client's abuse score scaled its limits by, or {@code null} when they were whole
 */
public record DecisionEvent(Instant time, String client, String tier, String route, String routeClass,
        Verdict verdict, String reason, String source, String rule, long limit, long remaining,
        List<RuleResult> rules, String priority, String upstream, String instance, String region,
        Double abuseFactor) {

    /** An event of a client whose limits were whole. */
    public DecisionEvent(Instant time, String client, String tier, String route, String routeClass,
            Verdict verdict, String reason, String source, String rule, long limit, long remaining,
            List<RuleResult> rules, String priority, String upstream, String instance, String region) {
        this(time, client, tier, route, routeClass, verdict, reason, source, rule, limit, remaining, rules, priority,
                upstream, instance, region, null);
    }

    /** The schema version written in every event's {@code schema} field. */
    public static final int SCHEMA = 1;

    /** What was decided. */
    public enum Verdict {
        /** Let through (possibly with shadow rules that would have denied: see {@link RuleResult#shadow()}). */
        ALLOWED,
        /** Refused with 429 by an enforced rule. */
        DENIED,
        /** Let through, but a rule in shadow would have denied it. */
        SHADOW_DENIED,
        /** Refused with 503: a fail-closed rule could not be checked. */
        UNAVAILABLE,
        /** Refused with 503: the upstream was full (load shedding). */
        SHED
    }

    /**
     * One rule's part in the decision.
     *
     * @param id the rule
     * @param allowed whether it alone would allow the request
     * @param remaining what its bucket has left
     * @param shadow whether its denial is only recorded
     */
    public record RuleResult(String id, boolean allowed, long remaining, boolean shadow) {
    }

    /**
     * The Kafka record key: the client, so that one client's events stay in one partition, in order; a request
     * without a client is keyed by its route.
     */
    public String key() {
        return client != null ? client : "route:" + route;
    }

    public DecisionEvent {
        rules = rules == null ? List.of() : List.copyOf(rules);
    }
}

package dev.ratelimiter.rollup;

/**
 * The part of a decision event (src/docs/decision-events.md, schema 1) the rollup needs. The hour comes from the
 * record timestamp, which the gateway sets to the event's {@code time}, so the time field itself is not kept.
 *
 * @param client the client's stable id, never null (events without one are not turned into a {@code DecisionEvent})
 * @param tier the client's tier, or null when the event has none
 * @param verdict how the gateway decided
 * @param rule the limiting rule, or null when the event has none
 * @param limit the limiting rule's quota as enforced (scaled by {@code abuseFactor}), or -1 when the event has none
 * @param abuseFactor the factor an abuse score scaled the client's limits by, 1 when the event names none
 */
record DecisionEvent(String client, String tier, Verdict verdict, String rule, long limit, double abuseFactor) {

    DecisionEvent(String client, String tier, Verdict verdict, String rule) {
        this(client, tier, verdict, rule, -1, 1);
    }
}

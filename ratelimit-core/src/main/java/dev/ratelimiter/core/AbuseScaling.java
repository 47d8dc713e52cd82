package dev.ratelimiter.core;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A rule in force scaled by a client's abuse factor, for one check. The factor is rounded down to a hundredth, so that
 * a decaying factor (a new value every millisecond) reuses at most a hundred scaled rules per rule rather than making
 * one per request; rounding down lowers by at most a hundredth more, never less.
 *
 * <p>The scaled limit keeps its shape, so the client keeps its bucket: a token bucket whose capacity is lowered holds
 * at most the new capacity (the script caps the stored tokens), and it refills at the lowered rate. A request costing
 * more than the scaled quota is held to one request's worth, as for shards: refused for ever would be a ban, which a
 * score is not.
 */
final class AbuseScaling {

    private final Map<String, Rule[]> scaled = new ConcurrentHashMap<>();

    Rule scaled(Rule inForce, double factor, int cost) {
        int hundredths = hundredths(factor);
        if (hundredths >= 100) {
            return inForce;
        }
        String key = inForce.id() + "@" + hundredths;
        Rule[] cached = scaled.get(key);
        if (cached == null || cached[0] != inForce) {
            cached = new Rule[] { inForce, inForce.withLimit(lowered(inForce.limit(), hundredths / 100.0)) };
            scaled.put(key, cached);
        }
        Rule rule = cached[1];
        if (cost > rule.limit().quota() && cost <= inForce.limit().quota()) {
            rule = inForce.withLimit(lowered(inForce.limit(), (double) cost / inForce.limit().quota()));
        }
        return rule;
    }

    /**
     * {@code limit} lowered to {@code factor} of its quota as a share of it: a token bucket keeps its time to fill, so
     * its rate is lowered by the same factor as its capacity ({@link Limit#scaled} rounds a refill of 1 token per
     * period back up to 1, leaving a lowered client its whole sustained rate).
     */
    static Limit lowered(Limit limit, double factor) {
        return limit.share(Math.max(1, (long) Math.ceil(limit.quota() * factor)));
    }

    /** The factor in whole hundredths, rounded down; 1e-9 absorbs the float error of {@code 1 − 0.9} and the like. */
    static int hundredths(double factor) {
        return Math.max(1, (int) Math.floor(factor * 100 + 1e-9));
    }
}

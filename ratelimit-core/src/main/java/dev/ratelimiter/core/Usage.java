package dev.ratelimiter.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A client's usage: each rule that applies to it, what its bucket holds, and the rules that could not be read for
 * lack of a value the query did not give.
 *
 * @param tier the tier the client was read as
 * @param killSwitch whether the kill switch is on (then nothing is enforced, whatever the buckets hold)
 * @param rules the rules that apply, in the rule set's order
 * @param skipped the rules that may apply, but depend on a value the query did not give
 * @param abuse the client's abuse score while it lowers the client's limits (the limits above are the lowered ones),
 * else null
 */
public record Usage(String tier, boolean killSwitch, List<RuleUsage> rules, List<Skipped> skipped,
        AbuseScores.View abuse) {

    public Usage {
        rules = List.copyOf(rules);
        skipped = List.copyOf(skipped);
    }

    /** A usage no abuse score lowers. */
    public Usage(String tier, boolean killSwitch, List<RuleUsage> rules, List<Skipped> skipped) {
        this(tier, killSwitch, rules, skipped, null);
    }

    /**
     * One rule's bucket for the client.
     *
     * @param rule the rule
     * @param limit the limit this region holds of it (a global rule's share, a shard's part), which the bucket fills to
     * @param shadow whether its refusals are only recorded (a shadow rule, or a tier not enforced)
     * @param reading what the bucket holds
     * @param resetAt when the bucket is whole again if nothing more is spent
     * @param approximate whether the reading is the store's side only (store-mode local: instances hold shares of it
     * that they settle every interval)
     * @param shared whether the bucket is shared with other clients (a rule keyed on nothing that names the client)
     */
    public record RuleUsage(Rule rule, Limit limit, boolean shadow, BucketReading reading, Instant resetAt,
            boolean approximate, boolean shared) {

        public Duration resetAfter() {
            return reading.resetAfter();
        }
    }

    /**
     * A rule left out of the answer.
     *
     * @param rule the rule
     * @param reason why, and which parameter would include it
     */
    public record Skipped(Rule rule, String reason) {
    }
}

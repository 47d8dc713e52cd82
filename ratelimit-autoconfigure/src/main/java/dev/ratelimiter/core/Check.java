package dev.ratelimiter.core;

/**
 * One rule to check for one request: which bucket, what it costs, and whether a denial counts.
 *
 * @param rule the rule
 * @param bucket the bucket it spends from
 * @param cost tokens to spend
 * @param shadow whether a denial is only recorded (shadow rule, or a tier not enforced)
 */
public record Check(Rule rule, BucketKey bucket, int cost, boolean shadow) {
}

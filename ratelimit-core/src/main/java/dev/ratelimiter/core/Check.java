package dev.ratelimiter.core;

/**
 * One rule to check for one request: which bucket, what it costs, and whether a denial counts.
 *
 * @param rule the rule
 * @param bucket the bucket it spends from
 * @param cost tokens to spend (a concurrency check always takes one permit)
 * @param shadow whether a denial is only recorded (shadow rule, or a tier not enforced)
 * @param permits for a limit that {@linkplain Limit#capsInProgress() caps requests in progress}: the permits of the request, whose id the permit taken here carries and
 * which the store tells when it grants it; otherwise {@code null}
 */
public record Check(Rule rule, BucketKey bucket, int cost, boolean shadow, RequestPermits permits) {

    public Check {
        if (permits == null && rule.limit().capsInProgress()) {
            throw new IllegalArgumentException("a check of concurrency rule '" + rule.id() + "' needs the request's "
                    + "permits, which it takes a permit for");
        }
    }

    /** A check of a rate (not concurrency) rule. */
    public Check(Rule rule, BucketKey bucket, int cost, boolean shadow) {
        this(rule, bucket, cost, shadow, null);
    }

    /** Whether this check takes a permit that must be given back when the request ends. */
    public boolean concurrency() {
        return rule.limit().capsInProgress();
    }

    /** The id of the permit a concurrency check takes; {@code null} for other checks. */
    public String permit() {
        return permits == null ? null : permits.id();
    }

    /** This check against another rule (a fair share, a shard), everything else kept. */
    public Check withRule(Rule other) {
        return new Check(other, bucket, cost, shadow, permits);
    }
}

package dev.ratelimiter.core;

import java.time.Duration;

/**
 * What one rule said about one request.
 *
 * @param check the check
 * @param allowed whether this rule alone would allow the request
 * @param remaining whole units left in the bucket after the request (nothing is spent if the request was denied)
 * @param retryAfter how long until the request could pass this rule; zero when it passes
 * @param resetAfter how long until the bucket is back to its full quota
 */
public record RuleOutcome(Check check, boolean allowed, long remaining, Duration retryAfter, Duration resetAfter) {

    public RuleOutcome {
        remaining = Math.max(0, remaining);
    }

    public Rule rule() {
        return check.rule();
    }

    /** Denied by an enforced rule: the request must be refused. */
    public boolean enforcedDenial() {
        return !allowed && !check.shadow();
    }

    /** Denied by a rule only in shadow: the request passes, the denial is recorded. */
    public boolean shadowDenial() {
        return !allowed && check.shadow();
    }
}

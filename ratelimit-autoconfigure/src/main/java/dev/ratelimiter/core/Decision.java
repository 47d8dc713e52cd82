package dev.ratelimiter.core;

import java.time.Duration;

/**
 * The outcome of one rate-limit check.
 *
 * @param allowed whether the request may proceed
 * @param limit the limit that decided (its policy name and size feed the response headers)
 * @param remaining whole tokens left after this request (0 when denied)
 * @param retryAfter how long until the same request could be allowed; zero when allowed
 * @param resetAfter how long until the bucket is full again
 * @param source where the decision was made
 */
public record Decision(boolean allowed, TokenBucketLimit limit, long remaining, Duration retryAfter,
        Duration resetAfter, Source source) {

    /** Where a decision was made. */
    public enum Source {
        /** The shared store (Redis): exact across every instance. */
        STORE,
        /** This instance's memory: either by configuration or because the store could not answer in time. */
        LOCAL
    }

    public Decision {
        if (remaining < 0) {
            remaining = 0;
        }
    }
}

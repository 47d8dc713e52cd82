package dev.ratelimiter.core;

import reactor.core.publisher.Mono;

/**
 * Where token buckets live. Implementations must take tokens atomically: two concurrent calls for the
 * same key can never both spend the last token.
 */
@FunctionalInterface
public interface RateLimitStore {

    /**
     * Takes {@code cost} tokens from the bucket {@code key} if it holds that many, refilling it first for
     * the time since it was last touched.
     */
    Mono<Decision> tryConsume(BucketKey key, TokenBucketLimit limit, int cost);
}

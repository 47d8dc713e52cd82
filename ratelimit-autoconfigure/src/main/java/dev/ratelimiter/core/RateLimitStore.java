package dev.ratelimiter.core;

import java.util.List;
import java.util.Optional;

import reactor.core.publisher.Mono;

/**
 * Where buckets live. One call evaluates every check of one request, all or nothing: if an enforced check
 * denies, no bucket is spent; otherwise every check that allows spends its cost (shadow checks that would deny
 * spend nothing). Two concurrent calls can never both spend the last token.
 */
@FunctionalInterface
public interface RateLimitStore {

    /** The verdict, with outcomes in the order of {@code checks}. */
    Mono<Verdict> evaluate(List<Check> checks);

    /**
     * Gives back the permits that concurrency checks took (see {@link Check#permit()}): when the request's response
     * completes, fails or is cancelled. Idempotent — a permit not held is ignored, so a caller unsure whether the
     * permit was taken may release it anyway. Never fails; a permit that cannot be given back expires with its lease.
     *
     * @param permits concurrency checks of one request
     * @param source where the verdict that took them was made, or {@code null} when the verdict was never seen (the
     * request was cancelled while it was being decided)
     */
    default Mono<Void> release(List<Check> permits, Verdict.Source source) {
        return Mono.empty();
    }

    /** This store, or a store it delegates to, of the given type (for health and metrics to look inside). */
    default <T> Optional<T> find(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : Optional.empty();
    }
}

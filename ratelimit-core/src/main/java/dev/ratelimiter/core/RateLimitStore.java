package dev.ratelimiter.core;

import java.util.List;
import java.util.Optional;

import reactor.core.publisher.Mono;

/**
 * Where buckets live. One call evaluates every check of one request, all or nothing: if an enforced check
 * denies, no bucket is spent; otherwise every check that allows spends its cost (shadow checks that would deny
 * spend nothing). Two concurrent calls can never both spend the last token.
 *
 * <p>A store that grants a concurrency permit tells the request's {@link RequestPermits} itself, from its own answer
 * ({@link RequestPermits#granted}), also when that answer lands after the caller stopped waiting: the permit is then
 * given back when the request ends, or at once if it has ended.
 */
@FunctionalInterface
public interface RateLimitStore {

    /**
     * Reactor context key of the {@link reactor.core.scheduler.Scheduler} a store sets its timers on (the store
     * call's timeout, see {@link FailSafeStore}). The gateway puts the request's event loop there: a timer is then a
     * task in that loop's own queue, set without waking any thread, where the default (Reactor's parallel scheduler)
     * wakes a timer thread for nearly every request under load. A store without timers ignores it.
     */
    String TIMER_SCHEDULER = RateLimitStore.class.getName() + ".timer";

    /** The verdict, with outcomes in the order of {@code checks}. */
    Mono<Verdict> evaluate(List<Check> checks);

    /**
     * This store, or a store it delegates to, of the given type: to look inside a store assembled elsewhere (a
     * {@link StoreStack} hands its parts out itself).
     */
    default <T> Optional<T> find(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : Optional.empty();
    }
}

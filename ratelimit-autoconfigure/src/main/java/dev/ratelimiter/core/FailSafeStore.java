package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Asks the shared store, but never waits for it longer than {@code timeout}, never retries, and stops asking while
 * a circuit breaker is open. When the store cannot answer, each rule is decided by its failure mode:
 * <ul>
 * <li>{@link FailureMode#LOCAL}: from this instance's own bucket, holding the rule's fair share doubled —
 * limit ÷ live instances × 2, never more than the limit itself. A client spread evenly over N instances then gets
 * at most min(N, 2) × its limit while the store is gone; a client landing unevenly may be refused early.</li>
 * <li>{@link FailureMode#OPEN}: allowed, and counted.</li>
 * <li>{@link FailureMode#CLOSED}: the request is refused with 503 (for login, password reset, one-time codes).</li>
 * </ul>
 * A limiter that waits politely on a sick store turns a storage problem into a gateway outage; one that decides
 * locally stays approximately right and fully available.
 */
public final class FailSafeStore implements RateLimitStore {

    private static final Logger logger = LoggerFactory.getLogger(FailSafeStore.class);
    private static final long WARN_EVERY_NANOS = Duration.ofSeconds(30).toNanos();

    private final RateLimitStore store;
    private final Duration timeout;
    private final StoreBreaker breaker;
    private final StoreMetrics metrics;
    private final WithoutStore withoutStore;
    private final LongSupplier nanoClock;
    private final AtomicLong lastWarning;
    private final AtomicLong fallbackDecisions = new AtomicLong();
    private final Mono<Verdict> timedOut;

    /**
     * @param store the shared store asked first
     * @param withoutStore decides when the store cannot (its closed rules' Retry-After usually follows the breaker:
     * {@link WithoutStore#untilBreakerRetries})
     * @param timeout the longest a store call may take
     * @param breaker stops store calls while the store keeps failing
     * @param metrics told of every store call
     * @param nanoClock {@link System#nanoTime} but in tests: times the store calls and spaces the warnings
     */
    public FailSafeStore(RateLimitStore store, WithoutStore withoutStore, Duration timeout, StoreBreaker breaker,
            StoreMetrics metrics, LongSupplier nanoClock) {
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("store timeout must be positive, but was " + timeout);
        }
        this.store = store;
        this.timeout = timeout;
        this.breaker = breaker;
        this.metrics = metrics;
        this.withoutStore = withoutStore;
        this.nanoClock = nanoClock;
        this.lastWarning = new AtomicLong(nanoClock.getAsLong() - WARN_EVERY_NANOS);
        String message = "no answer within " + timeout;
        this.timedOut = Mono.error(() -> new StoreTimeoutException(message));
    }

    /**
     * The store did not answer within the timeout. Made without a stack trace, instead of Reactor's own
     * {@link TimeoutException} with its message formatted and its stack filled in: an overloaded gateway makes
     * thousands a second, and each cost more CPU than the decision it stands for: more overload, more timeouts (at
     * saturation on 2 cores, 27–35 % of exact decisions timed out with it, about 13 % without; see the operator notes).
     */
    static final class StoreTimeoutException extends TimeoutException {

        StoreTimeoutException(String message) {
            super(message);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    @Override
    public Mono<Verdict> evaluate(List<Check> checks) {
        return Mono.deferContextual(context -> {
            Scheduler timer = context.getOrDefault(RateLimitStore.TIMER_SCHEDULER, Background.scheduler());
            if (!breaker.tryAcquirePermission()) {
                metrics.storeCall(StoreMetrics.Outcome.REJECTED, Duration.ZERO);
                return Mono.fromSupplier(() -> decideWithoutStore(checks, null));
            }
            long start = nanoClock.getAsLong();
            return Mono.defer(() -> store.evaluate(checks))
                    .timeout(timeout, timedOut, timer)
                    .doOnNext(verdict -> {
                        breaker.onSuccess();
                        Duration took = Duration.ofNanos(nanoClock.getAsLong() - start);
                        metrics.storeCall(StoreMetrics.Outcome.SUCCESS, took);
                    })
                    .doOnCancel(breaker::releasePermission)
                    .onErrorResume(failure -> {
                        long elapsed = nanoClock.getAsLong() - start;
                        breaker.onError();
                        metrics.storeCall(failure instanceof TimeoutException ? StoreMetrics.Outcome.TIMEOUT
                                : StoreMetrics.Outcome.ERROR, Duration.ofNanos(elapsed));
                        return Mono.fromSupplier(() -> decideWithoutStore(checks, failure));
                    });
        });
    }

    private Verdict decideWithoutStore(List<Check> checks, Throwable failure) {
        fallbackDecisions.incrementAndGet();
        warnOccasionally(failure);
        return withoutStore.decide(checks);
    }

    @Override
    public <T> Optional<T> find(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : store.find(type);
    }

    /** Decisions made without the store since start. */
    public long fallbackDecisions() {
        return fallbackDecisions.get();
    }

    public StoreBreaker breaker() {
        return breaker;
    }

    private void warnOccasionally(Throwable failure) {
        long now = nanoClock.getAsLong();
        long last = lastWarning.get();
        if (now - last >= WARN_EVERY_NANOS && lastWarning.compareAndSet(last, now)) {
            String reason = failure == null ? "circuit breaker " + breaker.name() + " is " + breaker.state()
                    : failure instanceof TimeoutException ? "no answer within " + timeout : failure.toString();
            logger.warn("Rate-limit store unavailable ({}); deciding by each rule's failure mode until it answers "
                    + "again ({} decisions so far, {} live instances)", reason, fallbackDecisions.get(),
                    withoutStore.liveInstances());
        }
    }
}

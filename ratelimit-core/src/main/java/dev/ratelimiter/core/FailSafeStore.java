package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Asks the shared store, but never waits for it longer than {@code maxWait}, never retries, and stops asking while
 * a circuit breaker is open. When the store cannot answer, each rule is decided by its failure mode
 * ({@link WithoutStore}):
 * <ul>
 * <li>{@link FailureMode#LOCAL}: from this instance's own bucket, holding its share of the limit and continuing from
 * what the store last reported for it; what it admits is charged to the store when it answers again.</li>
 * <li>{@link FailureMode#OPEN}: allowed, and counted.</li>
 * <li>{@link FailureMode#CLOSED}: the request is refused with 503 (for login, password reset, one-time codes).</li>
 * </ul>
 * A limiter that waits politely on a sick store turns a storage problem into a gateway outage; one that decides
 * locally stays approximately right and fully available.
 *
 * <p>The store's own timeout is the store's business: the Redis store counts it from the moment its call is written,
 * on the thread that reads the answer, so that a busy gateway waits for an answer already on its way (see
 * {@code WireTimedCommand}) and fails the call with a {@link StoreTimeoutException} only when Redis is silent.
 * {@code maxWait} here is the backstop over everything: a call that could not even be sent, the gateway's own queues.
 */
public final class FailSafeStore implements RateLimitStore {

    private static final Logger logger = LoggerFactory.getLogger(FailSafeStore.class);
    private static final long WARN_EVERY_NANOS = Duration.ofSeconds(30).toNanos();

    private final RateLimitStore store;
    private final Duration maxWait;
    private final StoreBreaker breaker;
    private final StoreMetrics metrics;
    private final WithoutStore withoutStore;
    private final FallbackCharges charges;
    private final LongSupplier nanoClock;
    private final AtomicLong lastWarning;
    private final AtomicBoolean warnedOfFollow = new AtomicBoolean();
    private final AtomicLong fallbackDecisions = new AtomicLong();
    private final RecentFallbacks recent;
    private final AtomicBoolean owing = new AtomicBoolean();
    /** When the last timeout the breaker counted was noticed. */
    private final AtomicLong lastCountedStall;
    private final AtomicBoolean charging = new AtomicBoolean();
    private final Queue<FallbackCharges.Charge> unsent = new ConcurrentLinkedQueue<>();
    private final Mono<Verdict> waitedTooLong;

    /**
     * @param store the shared store asked first
     * @param withoutStore decides when the store cannot (its closed rules' Retry-After usually follows the breaker:
     * {@link WithoutStore#untilBreakerRetries})
     * @param maxWait the longest a decision waits for the store, whatever the reason
     * @param breaker stops store calls while the store keeps failing
     * @param metrics told of every store call
     * @param charges where what the fallback admitted is charged when the store answers again
     * @param nanoClock {@link System#nanoTime} but in tests: times the store calls and spaces the warnings
     */
    public FailSafeStore(RateLimitStore store, WithoutStore withoutStore, Duration maxWait, StoreBreaker breaker,
            StoreMetrics metrics, FallbackCharges charges, LongSupplier nanoClock) {
        if (maxWait == null || maxWait.isZero() || maxWait.isNegative()) {
            throw new IllegalArgumentException("the longest wait for the store must be positive, but was " + maxWait);
        }
        this.store = store;
        this.maxWait = maxWait;
        this.breaker = breaker;
        this.metrics = metrics;
        this.withoutStore = withoutStore;
        this.charges = charges;
        this.nanoClock = nanoClock;
        this.lastWarning = new AtomicLong(nanoClock.getAsLong() - WARN_EVERY_NANOS);
        this.lastCountedStall = new AtomicLong(nanoClock.getAsLong() - 1);
        this.recent = new RecentFallbacks(nanoClock);
        String message = "no answer within " + maxWait;
        this.waitedTooLong = Mono.error(() -> new MaxWaitException(message));
    }

    /** Charges nothing back (a store whose buckets no other instance shares). */
    public FailSafeStore(RateLimitStore store, WithoutStore withoutStore, Duration maxWait, StoreBreaker breaker,
            StoreMetrics metrics, LongSupplier nanoClock) {
        this(store, withoutStore, maxWait, breaker, metrics, FallbackCharges.NONE, nanoClock);
    }

    /** Nothing came within the longest wait: the call may not even have left. */
    static final class MaxWaitException extends TimeoutException {

        MaxWaitException(String message) {
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
                return Mono.fromSupplier(() -> decideWithoutStore(checks, FallbackReason.BREAKER_OPEN, null));
            }
            long start = nanoClock.getAsLong();
            return Mono.defer(() -> store.evaluate(checks))
                    .timeout(maxWait, waitedTooLong, timer)
                    .doOnNext(verdict -> {
                        breaker.onSuccess();
                        Duration took = Duration.ofNanos(nanoClock.getAsLong() - start);
                        metrics.storeCall(StoreMetrics.Outcome.SUCCESS, took);
                        answered(verdict);
                    })
                    .doOnCancel(breaker::releasePermission)
                    .onErrorResume(failure -> {
                        long now = nanoClock.getAsLong();
                        long elapsed = now - start;
                        FallbackReason reason = reasonOf(failure);
                        recordFailure(reason, start, now);
                        metrics.storeCall(reason == FallbackReason.TIMEOUT || reason == FallbackReason.MAX_WAIT
                                ? StoreMetrics.Outcome.TIMEOUT : StoreMetrics.Outcome.ERROR, Duration.ofNanos(elapsed));
                        return Mono.fromSupplier(() -> decideWithoutStore(checks, reason, failure));
                    });
        });
    }

    /**
     * Tells the breaker of a failed call — once per stall: calls that were already waiting when an earlier timeout
     * was counted failed with it, in the same silence of the store, and counting each would let one pause of a few
     * milliseconds (a garbage collection in Redis, a busy machine) open the breaker for its whole wait, when the store
     * answers again at once. A store that stays silent still opens it: every call made after a counted timeout that
     * times out is counted, so it opens after about minimum-number-of-calls timeouts in a row.
     */
    private void recordFailure(FallbackReason reason, long start, long now) {
        boolean stall = reason == FallbackReason.TIMEOUT || reason == FallbackReason.MAX_WAIT;
        if (!stall || breaker.state() != StoreBreaker.State.CLOSED) {
            breaker.onError();
            return;
        }
        long counted = lastCountedStall.get();
        if (start - counted < 0) {
            return; // in flight when that stall was counted: the same silence
        }
        breaker.onError();
        lastCountedStall.accumulateAndGet(now, (a, b) -> b - a > 0 ? b : a);
    }

    private static FallbackReason reasonOf(Throwable failure) {
        if (failure instanceof MaxWaitException) {
            return FallbackReason.MAX_WAIT;
        }
        if (failure instanceof TimeoutException || failure.getCause() instanceof TimeoutException) {
            return FallbackReason.TIMEOUT;
        }
        if (failure instanceof StoreNotConnectedException
                || failure.getCause() instanceof StoreNotConnectedException) {
            return FallbackReason.NOT_CONNECTED;
        }
        return FallbackReason.ERROR;
    }

    /** The store answered: the fallback's buckets follow it, and what they owe it is charged once it is back. */
    private void answered(Verdict verdict) {
        recent.record(null);
        try {
            if (withoutStore.follow(verdict)) {
                owing.set(true);
            }
        }
        catch (RuntimeException ex) {
            // The store has decided: a bug in keeping the fallback up to date must not turn its answer into a fallback
            // decision (counted twice, once there and once here).
            if (warnedOfFollow.compareAndSet(false, true)) {
                logger.warn("Could not update the fallback's buckets from the store's answer (said once)", ex);
            }
        }
        if (owing.get() && owing.compareAndSet(true, false)) {
            // Not on this thread (a Redis client's I/O thread): after a long outage there can be many buckets to add up.
            Background.scheduler().schedule(this::chargeOwed);
        }
    }

    private Verdict decideWithoutStore(List<Check> checks, FallbackReason reason, Throwable failure) {
        fallbackDecisions.incrementAndGet();
        recent.record(reason);
        warnOccasionally(reason, failure);
        Verdict verdict = withoutStore.decide(checks, reason);
        // Once what it spent is on record: an answer of the store drains the record after seeing this.
        owing.set(true);
        return verdict;
    }

    /**
     * Sends what the fallback owes (on the background thread), one charge at a time in flight; charges that were not
     * sent wait for the next time the store answers.
     */
    private void chargeOwed() {
        List<FallbackCharges.Charge> owed = withoutStore.drainOwed();
        unsent.addAll(owed);
        if (unsent.isEmpty() || !charging.compareAndSet(false, true)) {
            if (!unsent.isEmpty()) {
                owing.set(true);
            }
            return;
        }
        List<FallbackCharges.Charge> batch = new ArrayList<>();
        for (FallbackCharges.Charge charge = unsent.poll(); charge != null; charge = unsent.poll()) {
            batch.add(charge);
        }
        // Acknowledged on the thread that reads the store's answer, in order with the decisions on the same connection:
        // a decision run before the charge reports a level without it, one run after with it (see WithoutStore.follow).
        Mono.defer(() -> charges.charge(batch))
                .doOnSuccess(done -> withoutStore.charged(batch))
                .doOnError(failure -> {
                    if (failure instanceof FallbackCharges.NotSentException notSent) {
                        List<FallbackCharges.Charge> again = notSent.unsent(batch);
                        withoutStore.charged(batch.stream().filter(charge -> !again.contains(charge)).toList());
                        unsent.addAll(again);
                        owing.set(true);
                    }
                    else {
                        // sent, and not to be sent again: as good as applied once the store runs it
                        withoutStore.charged(batch);
                        logger.debug("Charging the store for {} buckets decided without it may not have applied",
                                batch.size(), failure);
                    }
                })
                .doFinally(signal -> charging.set(false))
                .onErrorResume(failure -> Mono.empty())
                .subscribe();
    }

    /**
     * {@code charges}, and what they could not take held by this instance instead: spent from its own buckets (down to
     * one capacity of debt), which its fallback decides by, and owed to the store when it answers again. For amounts
     * reported by responses: while the store is down the fallback would otherwise admit a client by the minimum alone.
     * A charge that failed after it was sent may have been applied too: then it counts twice, never not at all.
     */
    public FallbackCharges orHeldHere(FallbackCharges charges) {
        return list -> Mono.defer(() -> charges.charge(list)).doOnError(failure -> {
            withoutStore.debit(list);
            owing.set(true);
        });
    }

    @Override
    public <T> Optional<T> find(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : store.find(type);
    }

    /** Decisions made without the store since start. */
    public long fallbackDecisions() {
        return fallbackDecisions.get();
    }

    /** The last minute's decisions, how many were made without the store, and why the last such one was. */
    public RecentFallbacks.Window lastMinute() {
        return recent.lastMinute();
    }

    public StoreBreaker breaker() {
        return breaker;
    }

    private void warnOccasionally(FallbackReason reason, Throwable failure) {
        long now = nanoClock.getAsLong();
        long last = lastWarning.get();
        if (now - last >= WARN_EVERY_NANOS && lastWarning.compareAndSet(last, now)) {
            String why = failure == null ? "circuit breaker " + breaker.name() + " is " + breaker.state()
                    : reason.label() + ": " + failure.getMessage();
            logger.warn("Rate-limit store unavailable ({}); deciding by each rule's failure mode until it answers "
                    + "again ({} decisions so far, {} live instances)", why, fallbackDecisions.get(),
                    withoutStore.liveInstances());
        }
    }
}

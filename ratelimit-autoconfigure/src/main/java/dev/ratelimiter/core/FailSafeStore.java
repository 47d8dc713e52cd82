package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

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
    private final LocalBucketStore fallback;
    private final Duration timeout;
    private final CircuitBreaker breaker;
    private final LiveInstances instances;
    private final StoreMetrics metrics;
    private final Map<String, Rule[]> fairShares = new ConcurrentHashMap<>();
    private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private final AtomicLong fallbackDecisions = new AtomicLong();
    private volatile int sharesSizedFor;

    public FailSafeStore(RateLimitStore store, LocalBucketStore fallback, Duration timeout, CircuitBreaker breaker,
            LiveInstances instances, StoreMetrics metrics) {
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("store timeout must be positive, but was " + timeout);
        }
        this.store = store;
        this.fallback = fallback;
        this.timeout = timeout;
        this.breaker = breaker;
        this.instances = instances;
        this.metrics = metrics;
    }

    @Override
    public Mono<Verdict> evaluate(List<Check> checks) {
        return Mono.defer(() -> {
            if (!breaker.tryAcquirePermission()) {
                metrics.storeCall(StoreMetrics.Outcome.REJECTED, Duration.ZERO);
                return Mono.fromSupplier(() -> decideWithoutStore(checks, null));
            }
            long start = System.nanoTime();
            return Mono.defer(() -> store.evaluate(checks))
                    .timeout(timeout)
                    .doOnNext(verdict -> {
                        long elapsed = System.nanoTime() - start;
                        breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
                        metrics.storeCall(StoreMetrics.Outcome.SUCCESS, Duration.ofNanos(elapsed));
                    })
                    .doOnCancel(breaker::releasePermission)
                    .onErrorResume(failure -> {
                        long elapsed = System.nanoTime() - start;
                        breaker.onError(elapsed, TimeUnit.NANOSECONDS, failure);
                        metrics.storeCall(failure instanceof TimeoutException ? StoreMetrics.Outcome.TIMEOUT
                                : StoreMetrics.Outcome.ERROR, Duration.ofNanos(elapsed));
                        return Mono.fromSupplier(() -> decideWithoutStore(checks, failure));
                    });
        });
    }

    private Verdict decideWithoutStore(List<Check> checks, Throwable failure) {
        fallbackDecisions.incrementAndGet();
        warnOccasionally(failure);
        List<RuleOutcome> refused = new ArrayList<>();
        for (Check check : checks) {
            if (check.rule().failureMode() == FailureMode.CLOSED && !check.shadow()) {
                refused.add(new RuleOutcome(check, false, 0, retryAfterWhenClosed(), Duration.ZERO));
            }
        }
        if (!refused.isEmpty()) {
            refused.forEach(outcome -> metrics.fallbackDecision(FailureMode.CLOSED));
            return Verdict.unavailable(refused);
        }
        List<Check> local = new ArrayList<>();
        for (Check check : checks) {
            if (check.rule().failureMode() == FailureMode.LOCAL) {
                local.add(new Check(fairShare(check.rule()), check.bucket(), check.cost(), check.shadow()));
            }
        }
        List<RuleOutcome> localOutcomes = local.isEmpty() ? List.of() : fallback.evaluateNow(local).outcomes();
        List<RuleOutcome> outcomes = new ArrayList<>(checks.size());
        int next = 0;
        for (Check check : checks) {
            FailureMode mode = check.rule().failureMode();
            metrics.fallbackDecision(mode == FailureMode.CLOSED ? FailureMode.OPEN : mode);
            if (mode == FailureMode.LOCAL) {
                outcomes.add(localOutcomes.get(next++));
            }
            else {
                // Open (or a closed rule in shadow): allowed, and the bucket is reported whole since nothing counted it.
                outcomes.add(new RuleOutcome(check, true, check.rule().limit().quota(), Duration.ZERO, Duration.ZERO));
            }
        }
        return Verdict.evaluated(outcomes, Verdict.Source.LOCAL);
    }

    /** The rule with its limit cut to this instance's doubled fair share, cached until the instance count changes. */
    private Rule fairShare(Rule rule) {
        int count = Math.max(1, instances.count());
        if (count != sharesSizedFor) {
            fairShares.clear();
            sharesSizedFor = count;
        }
        double factor = Math.min(1.0, 2.0 / count);
        if (factor >= 1.0) {
            return rule;
        }
        // Keyed by id and checked by identity: hashing a rule with thousands of customer keys per request would cost.
        Rule[] cached = fairShares.get(rule.id());
        if (cached == null || cached[0] != rule) {
            cached = new Rule[] { rule, rule.withLimit(rule.limit().scaled(factor)) };
            fairShares.put(rule.id(), cached);
        }
        return cached[1];
    }

    private Duration retryAfterWhenClosed() {
        Duration wait = breaker.getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1) > 0
                ? Duration.ofMillis(breaker.getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1))
                : Duration.ofSeconds(1);
        return wait.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : wait;
    }

    /** Decisions made without the store since start. */
    public long fallbackDecisions() {
        return fallbackDecisions.get();
    }

    public CircuitBreaker breaker() {
        return breaker;
    }

    private void warnOccasionally(Throwable failure) {
        long now = System.nanoTime();
        long last = lastWarning.get();
        if (now - last >= WARN_EVERY_NANOS && lastWarning.compareAndSet(last, now)) {
            String reason = failure == null ? "circuit breaker " + breaker.getName() + " is " + breaker.getState()
                    : failure instanceof TimeoutException ? "no answer within " + timeout : failure.toString();
            logger.warn("Rate-limit store unavailable ({}); deciding by each rule's failure mode until it answers "
                    + "again ({} decisions so far, {} live instances)", reason, fallbackDecisions.get(),
                    instances.count());
        }
    }
}

package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;

import reactor.core.publisher.Mono;

/**
 * Remembers denials: once a bucket has refused a request until time T, this instance refuses that bucket's
 * requests itself until T — at most {@link #MAX_MEMORY} — without asking the store. A client hammering past its
 * limit then costs the store one call per second per instance, not one per request.
 *
 * <p>A fixed table, not a cache: it is read for every exact decision and written for every refusal, on the request's
 * event loop, where a cache's bookkeeping must not run (Caffeine's write buffer, full under a burst of refusals with its
 * maintenance behind, made an event loop spin: BlockHound in {@code RedisClusterFailoverTest}). Two buckets sharing an
 * entry take turns: one's denial is forgotten early, and its next request asks the store — a call, never a wrong
 * answer. Memory stays bounded by the table, at most {@value #MAX_SLOTS} entries.
 */
public final class DenialCache implements RateLimitStore {

    /** The longest a denial is remembered, so that a limit raised at runtime is felt within a second. */
    public static final Duration MAX_MEMORY = Duration.ofSeconds(1);

    static final int MAX_SLOTS = 1 << 16;

    private final RateLimitStore store;
    private final LongSupplier nanoClock;
    private final AtomicReferenceArray<Denial> denials;
    private final int mask;

    /** @param maxKeys denials remembered at most (rounded to a power of two, at most {@value #MAX_SLOTS}) */
    public DenialCache(RateLimitStore store, long maxKeys, LongSupplier nanoClock) {
        this.store = store;
        this.nanoClock = nanoClock;
        int slots = (int) Math.min(MAX_SLOTS, Long.highestOneBit(Math.max(1, maxKeys - 1)) << 1);
        this.denials = new AtomicReferenceArray<>(slots);
        this.mask = slots - 1;
    }

    public DenialCache(RateLimitStore store, long maxKeys) {
        this(store, maxKeys, System::nanoTime);
    }

    @Override
    public Mono<Verdict> evaluate(List<Check> checks) {
        long now = nanoClock.getAsLong();
        for (Check check : checks) {
            if (check.shadow()) {
                continue;
            }
            Denial denial = denials.get(slot(check.bucket()));
            if (denial != null && denial.untilNanos - now > 0 && denial.rule == check.rule()
                    && denial.bucket.equals(check.bucket())) {
                RuleOutcome outcome = new RuleOutcome(check, false, 0, Duration.ofNanos(denial.untilNanos - now),
                        denial.resetAfter);
                return Mono.just(Verdict.evaluated(List.of(outcome), Verdict.Source.LOCAL));
            }
        }
        return store.evaluate(checks).doOnNext(verdict -> remember(verdict, now));
    }

    private void remember(Verdict verdict, long now) {
        if (verdict.allowed() || verdict.reason() != Verdict.Reason.EVALUATED) {
            return;
        }
        for (RuleOutcome outcome : verdict.outcomes()) {
            // A permit frees whenever some request ends: a concurrency refusal is not remembered.
            if (outcome.enforcedDenial() && !outcome.check().concurrency()) {
                Duration wait = outcome.retryAfter().compareTo(MAX_MEMORY) > 0 ? MAX_MEMORY : outcome.retryAfter();
                BucketKey bucket = outcome.check().bucket();
                denials.lazySet(slot(bucket), new Denial(bucket, outcome.rule(), now + wait.toNanos(),
                        outcome.resetAfter()));
            }
        }
    }

    private int slot(BucketKey bucket) {
        int hash = bucket.hashCode();
        return (hash ^ (hash >>> 16)) & mask;
    }

    @Override
    public <T> Optional<T> find(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : store.find(type);
    }

    /** Buckets currently remembered as denied (a scan of the table: for tests and operators, not requests). */
    public long size() {
        long now = nanoClock.getAsLong();
        long held = 0;
        for (int i = 0; i < denials.length(); i++) {
            Denial denial = denials.get(i);
            if (denial != null && denial.untilNanos - now > 0) {
                held++;
            }
        }
        return held;
    }

    /** A remembered denial; tied to the rule object, so that a changed rule is asked about afresh. */
    private record Denial(BucketKey bucket, Rule rule, long untilNanos, Duration resetAfter) {
    }
}

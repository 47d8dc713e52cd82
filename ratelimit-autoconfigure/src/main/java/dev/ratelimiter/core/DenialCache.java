package dev.ratelimiter.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import reactor.core.publisher.Mono;

/**
 * Remembers denials: once a bucket has refused a request until time T, this instance refuses that bucket's
 * requests itself until T — at most {@link #MAX_MEMORY} — without asking the store. A client hammering past its
 * limit then costs the store one call per second per instance, not one per request.
 */
public final class DenialCache implements RateLimitStore {

    /** The longest a denial is remembered, so that a limit raised at runtime is felt within a second. */
    public static final Duration MAX_MEMORY = Duration.ofSeconds(1);

    private final RateLimitStore store;
    private final LongSupplier nanoClock;
    private final Cache<BucketKey, Denial> denials;

    public DenialCache(RateLimitStore store, long maxKeys, LongSupplier nanoClock) {
        this.store = store;
        this.nanoClock = nanoClock;
        this.denials = Caffeine.newBuilder()
                .maximumSize(maxKeys)
                .ticker(nanoClock::getAsLong)
                .expireAfter(new UntilRetry())
                .build();
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
            Denial denial = denials.getIfPresent(check.bucket());
            if (denial != null && denial.untilNanos > now && denial.rule == check.rule()) {
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
                denials.put(outcome.check().bucket(), new Denial(outcome.rule(), now + wait.toNanos(),
                        outcome.resetAfter()));
            }
        }
    }

    @Override
    public <T> Optional<T> find(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : store.find(type);
    }

    /** Buckets currently remembered as denied. */
    public long size() {
        denials.cleanUp();
        return denials.estimatedSize();
    }

    /** A remembered denial; tied to the rule object, so that a changed rule is asked about afresh. */
    private record Denial(Rule rule, long untilNanos, Duration resetAfter) {
    }

    private final class UntilRetry implements Expiry<BucketKey, Denial> {

        @Override
        public long expireAfterCreate(BucketKey key, Denial denial, long currentTime) {
            return Math.max(0, denial.untilNanos - currentTime);
        }

        @Override
        public long expireAfterUpdate(BucketKey key, Denial denial, long currentTime, long currentDuration) {
            return Math.max(0, denial.untilNanos - currentTime);
        }

        @Override
        public long expireAfterRead(BucketKey key, Denial denial, long currentTime, long currentDuration) {
            return currentDuration;
        }
    }
}

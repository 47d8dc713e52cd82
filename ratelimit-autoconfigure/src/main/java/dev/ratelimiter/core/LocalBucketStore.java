package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import reactor.core.publisher.Mono;

/**
 * Buckets held in this JVM: exact for one instance, and the fallback when the shared store cannot answer in time.
 *
 * <p>All or nothing, like the Redis script: a request's buckets are locked in a fixed order (so two requests can
 * never deadlock), previewed, and spent only if no enforced check denies.
 *
 * <p>Memory is bounded twice over: a bucket idle for its limit's state lifetime is evicted (it would be full
 * again, so forgetting it changes no decision), and at most {@code maxKeys} buckets are kept. Only the second
 * bound can lose state, and then only in the client's favour.
 */
public final class LocalBucketStore implements RateLimitStore {

    private final Cache<BucketKey, BucketState> buckets;
    private final LongSupplier nanoClock;
    private final RequestPermits.Owner permitOwner = this::releaseNow;

    public LocalBucketStore(long maxKeys, LongSupplier nanoClock) {
        if (maxKeys < 1) {
            throw new IllegalArgumentException("maxKeys must be at least 1, but was " + maxKeys);
        }
        this.nanoClock = nanoClock;
        this.buckets = Caffeine.newBuilder()
                .maximumSize(maxKeys)
                .ticker(nanoClock::getAsLong)
                .expireAfter(new IdleUntilFull())
                .build();
    }

    public LocalBucketStore(long maxKeys) {
        this(maxKeys, System::nanoTime);
    }

    @Override
    public Mono<Verdict> evaluate(List<Check> checks) {
        return Mono.fromSupplier(() -> evaluateNow(checks));
    }

    /** The same as {@link #evaluate} without the reactive wrapper; it never waits on anything but bucket locks. */
    public Verdict evaluateNow(List<Check> checks) {
        long now = nanoClock.getAsLong();
        List<BucketState> states = new ArrayList<>(checks.size());
        for (Check check : checks) {
            states.add(stateFor(check, now));
        }
        Verdict verdict = Verdict.evaluated(OrderedLocks.holding(checks, states, () -> decide(checks, states, now)),
                Verdict.Source.LOCAL);
        List<Check> taken = verdict.permitsHeld();
        if (!taken.isEmpty()) {
            for (Check check : taken) {
                // Read again now that it holds a permit: a bucket holding permits must not expire (see IdleUntilFull).
                buckets.getIfPresent(check.bucket());
            }
            // Outside the bucket locks: a request that already ended gives the permits back at once, which locks them.
            taken.get(0).permits().granted(permitOwner, taken);
        }
        return verdict;
    }

    /**
     * Continues the bucket of {@code check} (this instance's share of a shared limit), if this store holds it, from what
     * the shared store reported: {@code remaining} tokens (a token bucket) or requests' room (a sliding window) of the
     * whole limit, of which this instance holds {@code share}. Charges this bucket owes the store and the store has not
     * acknowledged are taken off first ({@link #charged}). Returns what the bucket owed the store until now (see
     * {@link #settleOwed}), so that nothing it spent on its own is forgotten; {@code null} when the bucket is not held
     * (nothing is made: this runs for every decision the store makes).
     */
    BucketState.Owed follow(Check check, long remaining, double share) {
        BucketState state = buckets.getIfPresent(check.bucket());
        Limit limit = check.rule().limit();
        if (state == null || !state.fits(limit)) {
            return null;
        }
        long now = nanoClock.getAsLong();
        synchronized (state) {
            BucketState.Owed owed = state.settleOwedUncharged(limit, now);
            state.followStore(limit, remaining, share, now);
            return owed;
        }
    }

    /**
     * Makes the bucket of {@code check} from what the shared store reported {@code atNanos} ago, unless this store holds
     * it already: a bucket made for the fallback starts where the store left it, not full.
     */
    void startFrom(Check check, long remaining, double share, long atNanos) {
        if (buckets.getIfPresent(check.bucket()) != null) {
            return;
        }
        Limit limit = check.rule().limit();
        buckets.get(check.bucket(), key -> {
            BucketState state = BucketState.create(limit, atNanos);
            state.followStore(limit, remaining, share, atNanos);
            return state;
        });
    }

    /**
     * Tokens the bucket of {@code check} spent on its own since it last followed the store (or was made), beyond what
     * the store refilled meanwhile; counted once: the bucket counts afresh from here, and takes them off the store's
     * reports until they are {@link #charged}. Nothing for a bucket not held.
     */
    BucketState.Owed settleOwed(Check check) {
        BucketState state = buckets.getIfPresent(check.bucket());
        if (state == null || !state.fits(check.rule().limit())) {
            return BucketState.Owed.NOTHING;
        }
        synchronized (state) {
            return state.settleOwedUncharged(check.rule().limit(), nanoClock.getAsLong());
        }
    }

    /** The store acknowledged a charge of {@code tokens} for this bucket (or may have applied it). */
    void charged(BucketKey bucket, double tokens) {
        BucketState state = buckets.getIfPresent(bucket);
        if (state != null) {
            synchronized (state) {
                state.charged(tokens);
            }
        }
    }

    /** Gives back the permits of these concurrency checks; those not held are ignored. */
    public void releaseNow(List<Check> permits) {
        for (Check check : permits) {
            if (check.concurrency() && buckets.getIfPresent(check.bucket()) instanceof BucketState.Concurrency state) {
                synchronized (state) {
                    state.release(check.permit());
                }
                buckets.getIfPresent(check.bucket());
            }
        }
    }

    /** Permits in progress in one concurrency bucket (0 when it holds none). */
    public int inProgress(BucketKey bucket) {
        if (buckets.getIfPresent(bucket) instanceof BucketState.Concurrency state) {
            synchronized (state) {
                return state.inProgress();
            }
        }
        return 0;
    }

    /** Called holding every bucket's monitor. */
    private static List<RuleOutcome> decide(List<Check> checks, List<BucketState> states, long now) {
        List<BucketState.Preview> previews = new ArrayList<>(checks.size());
        boolean enforcedDenial = false;
        for (int i = 0; i < checks.size(); i++) {
            Check check = checks.get(i);
            BucketState.Preview preview = states.get(i).preview(check, now);
            previews.add(preview);
            enforcedDenial |= !preview.allowed() && !check.shadow();
        }
        List<RuleOutcome> outcomes = new ArrayList<>(checks.size());
        for (int i = 0; i < checks.size(); i++) {
            Check check = checks.get(i);
            BucketState.Preview preview = previews.get(i);
            if (!enforcedDenial && preview.allowed()) {
                states.get(i).commit(preview);
                states.get(i).lifetimeNanos = check.rule().limit().stateLifetime().toNanos();
            }
            long remaining = enforcedDenial && preview.allowed() ? preview.remaining() + check.cost() : preview.remaining();
            outcomes.add(new RuleOutcome(check, preview.allowed(), remaining, preview.retryAfter(), preview.resetAfter()));
        }
        return outcomes;
    }

    private BucketState stateFor(Check check, long now) {
        Limit limit = check.rule().limit();
        BucketState state = buckets.get(check.bucket(), k -> BucketState.create(limit, now));
        if (!state.fits(limit)) {
            state = BucketState.create(limit, now);
            buckets.put(check.bucket(), state);
        }
        return state;
    }

    /** This store's clock, now. */
    long now() {
        return nanoClock.getAsLong();
    }

    /** Number of buckets currently held (approximate while evictions are pending). */
    public long size() {
        buckets.cleanUp();
        return buckets.estimatedSize();
    }

    private static final class IdleUntilFull implements Expiry<BucketKey, BucketState> {

        @Override
        public long expireAfterCreate(BucketKey key, BucketState state, long currentTime) {
            return lifetime(state);
        }

        @Override
        public long expireAfterUpdate(BucketKey key, BucketState state, long currentTime, long currentDuration) {
            return lifetime(state);
        }

        @Override
        public long expireAfterRead(BucketKey key, BucketState state, long currentTime, long currentDuration) {
            return lifetime(state);
        }

        /** A concurrency bucket holding permits stays: forgetting it would forget requests still in progress. */
        private static long lifetime(BucketState state) {
            return state instanceof BucketState.Concurrency permits && permits.holdsPermits() ? Long.MAX_VALUE
                    : state.lifetimeNanos;
        }
    }
}

package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
 *
 * <p>Concurrency buckets are kept apart, in a map of their own, and only while they hold a permit: a size-bounded
 * cache evicts whatever its policy picks, and a permit forgotten there would be a request in progress that no longer
 * counts (a flood of new keys made room by evicting them). A request in progress always ends and gives its permit
 * back, so that map holds no more buckets than there are requests in progress; it is capped at {@code maxKeys} as
 * well, and a request needing a new bucket beyond that is refused rather than counted nowhere.
 */
public final class LocalBucketStore implements RateLimitStore, UsageReader {

    private final Cache<BucketKey, BucketState> buckets;
    private final Map<BucketKey, BucketState.Concurrency> permitBuckets = new ConcurrentHashMap<>();
    private final long maxKeys;
    private final LongSupplier nanoClock;
    /** Turns {@link #nanoClock} into epoch time, for calendar quotas (a day ends at midnight, not after 24 hours). */
    private final long epochOffsetNanos;
    private final RequestPermits.Owner permitOwner = this::releaseNow;

    public LocalBucketStore(long maxKeys, LongSupplier nanoClock) {
        if (maxKeys < 1) {
            throw new IllegalArgumentException("maxKeys must be at least 1, but was " + maxKeys);
        }
        this.maxKeys = maxKeys;
        this.nanoClock = nanoClock;
        this.epochOffsetNanos = System.currentTimeMillis() * 1_000_000L - nanoClock.getAsLong();
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
        List<RuleOutcome> outcomes;
        do {
            List<BucketState> states = new ArrayList<>(checks.size());
            for (Check check : checks) {
                states.add(stateFor(check, now));
            }
            // null: a permit bucket was dropped between the look-up and its lock; look again
            outcomes = OrderedLocks.holding(checks, states, () -> decide(checks, states, now));
        } while (outcomes == null);
        Verdict verdict = Verdict.evaluated(outcomes, Verdict.Source.LOCAL);
        List<Check> taken = verdict.permitsHeld();
        if (!taken.isEmpty()) {
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
            BucketState state = BucketState.create(limit, atNanos, epochOffsetNanos);
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

    /** {@link BucketState#debit}s the check's bucket by {@code amount}, made if this store does not hold it yet. */
    void debit(Check check, double amount) {
        if (check.concurrency()) {
            return;
        }
        long now = nanoClock.getAsLong();
        BucketState state = stateFor(check, now);
        synchronized (state) {
            state.debit(check.rule().limit(), amount, now);
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
            BucketState.Concurrency state = check.concurrency() ? permitBuckets.get(check.bucket()) : null;
            if (state != null) {
                synchronized (state) {
                    state.release(check.permit());
                    dropIfEmpty(check.bucket(), state);
                }
            }
        }
    }

    @Override
    public Mono<List<BucketReading>> read(List<UsageProbe> probes) {
        return Mono.fromSupplier(() -> readNow(probes));
    }

    /**
     * {@link #read} without the reactive wrapper: each bucket's preview of a request costing nothing, looked up
     * quietly (a bucket this store does not hold reads as full and is not made; one it holds is not kept longer).
     */
    public List<BucketReading> readNow(List<UsageProbe> probes) {
        long now = nanoClock.getAsLong();
        List<BucketReading> readings = new ArrayList<>(probes.size());
        for (UsageProbe probe : probes) {
            Limit limit = probe.rule().limit();
            if (limit.capsInProgress()) {
                int held = inProgress(probe.bucket());
                readings.add(new BucketReading(held > 0, limit.quota() - held, Duration.ZERO, held));
                continue;
            }
            BucketState state = buckets.policy().getIfPresentQuietly(probe.bucket());
            if (state == null || !state.fits(limit)) {
                readings.add(BucketReading.untouched(limit));
                continue;
            }
            synchronized (state) {
                BucketState.Preview preview = state.preview(limit, 0, now);
                readings.add(new BucketReading(true, preview.remaining(), preview.resetAfter(), 0));
            }
        }
        return readings;
    }

    /** Permits in progress in one concurrency bucket (0 when it holds none). */
    public int inProgress(BucketKey bucket) {
        BucketState.Concurrency state = permitBuckets.get(bucket);
        if (state == null) {
            return 0;
        }
        synchronized (state) {
            return state.inProgress();
        }
    }

    /**
     * Called holding every bucket's monitor. Null when a permit bucket was dropped after it was looked up: the request
     * must look its buckets up again, or its permit would be taken in a bucket nothing counts any more.
     */
    private List<RuleOutcome> decide(List<Check> checks, List<BucketState> states, long now) {
        for (BucketState state : states) {
            if (state instanceof BucketState.Concurrency permits && permits.retired) {
                return null;
            }
        }
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
            if (states.get(i) instanceof BucketState.Concurrency permits) {
                dropIfEmpty(check.bucket(), permits); // a request refused by another rule took no permit
            }
        }
        return outcomes;
    }

    /** Called holding the bucket's monitor: a permit bucket holding no permit is dropped (a new one is the same). */
    private void dropIfEmpty(BucketKey key, BucketState.Concurrency state) {
        if (!state.holdsPermits() && state != BucketState.Concurrency.NO_ROOM) {
            state.retired = true;
            permitBuckets.remove(key, state);
        }
    }

    private BucketState stateFor(Check check, long now) {
        if (check.concurrency()) {
            BucketState.Concurrency held = permitBuckets.get(check.bucket());
            if (held != null) {
                return held;
            }
            return permitBuckets.size() >= maxKeys ? BucketState.Concurrency.NO_ROOM
                    : permitBuckets.computeIfAbsent(check.bucket(), key -> new BucketState.Concurrency());
        }
        Limit limit = check.rule().limit();
        BucketState state = buckets.get(check.bucket(), k -> BucketState.create(limit, now, epochOffsetNanos));
        if (!state.fits(limit)) {
            state = BucketState.create(limit, now, epochOffsetNanos);
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
        return buckets.estimatedSize() + permitBuckets.size();
    }

    private static final class IdleUntilFull implements Expiry<BucketKey, BucketState> {

        @Override
        public long expireAfterCreate(BucketKey key, BucketState state, long currentTime) {
            return state.lifetimeNanos;
        }

        @Override
        public long expireAfterUpdate(BucketKey key, BucketState state, long currentTime, long currentDuration) {
            return state.lifetimeNanos;
        }

        @Override
        public long expireAfterRead(BucketKey key, BucketState state, long currentTime, long currentDuration) {
            return state.lifetimeNanos;
        }
    }
}

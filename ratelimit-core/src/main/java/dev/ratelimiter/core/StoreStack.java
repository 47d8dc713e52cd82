package dev.ratelimiter.core;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The store a gateway decides with when its buckets are shared by every instance, assembled in one place, and the
 * parts of it that health, metrics and the settle loop look at. From the outside in:
 * <ol>
 * <li>{@link MemoryUntilShared} (only when switched on): this instance's memory until the shared store first
 * answers;</li>
 * <li>{@link ModeRoutingStore}: local-mode checks to the {@link LeaseStore} (settled through the {@link SettleClient}),
 * exact checks on to</li>
 * <li>{@link DenialCache} (on by default): a denied bucket is refused here until its retry time;</li>
 * <li>{@link FailSafeStore}: the shared store under a timeout and a breaker, each rule's failure mode when it
 * fails.</li>
 * </ol>
 * Built by {@link #builder()}, which refuses a stack missing a required part with a sentence saying which.
 */
public final class StoreStack {

    /** The longest the shared store may take to answer an exact decision once its call is sent. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(5);

    /**
     * What an exact decision may wait for the shared store beyond its timeout when the store times its own calls (see
     * {@link Builder#maxWait}): the gateway's own queues, a call that could not be sent at once.
     */
    public static final Duration DEFAULT_QUEUE_ALLOWANCE = Duration.ofMillis(100);

    /** The longest an exact decision waits for the shared store in all, by default: timeout and queue allowance. */
    public static final Duration DEFAULT_MAX_WAIT = DEFAULT_TIMEOUT.plus(DEFAULT_QUEUE_ALLOWANCE);

    /** How often local-mode shares are settled with the shared store. */
    public static final Duration DEFAULT_SETTLE_INTERVAL = Duration.ofMillis(100);

    /**
     * The longest a local-mode share this instance alone uses goes without settling while it lasts (see
     * {@link LeaseStore}): at 2 s, a key one instance serves at 7 requests a second costs Redis one bucket-settle per
     * 14 requests instead of per 0.7.
     */
    public static final Duration DEFAULT_SETTLE_MAX_SILENCE = Duration.ofSeconds(2);

    /** Buckets each in-memory part (denial cache, shares, fallback buckets) holds at most. */
    public static final long DEFAULT_LOCAL_MAX_KEYS = 100_000;

    /** The breaker's name when none is given. */
    public static final String DEFAULT_BREAKER_NAME = "ratelimit-store";

    private final RateLimitStore store;
    private final FailSafeStore failSafe;
    private final DenialCache denialCache;
    private final LeaseStore leases;
    private final MemoryUntilShared memoryUntilShared;
    private final Duration settleInterval;
    private final FallbackCharges charges;

    private StoreStack(Builder builder) {
        long maxKeys = builder.localMaxKeys;
        LongSupplier clock = builder.nanoClock;
        StoreBreaker breaker = builder.breaker != null ? builder.breaker
                : new StoreBreaker(DEFAULT_BREAKER_NAME, StoreBreaker.Settings.DEFAULTS, clock);
        WithoutStore exactFallback = new WithoutStore(new LocalBucketStore(maxKeys, clock), builder.instances,
                builder.metrics, WithoutStore.untilBreakerRetries(breaker), builder.fallbackShareFactor);
        Duration maxWait = builder.maxWait != null ? builder.maxWait : builder.timeout;
        this.failSafe = new FailSafeStore(builder.sharedStore, exactFallback, maxWait, breaker, builder.metrics,
                builder.fallbackCharges, clock);
        this.denialCache = builder.denialCache ? new DenialCache(failSafe, maxKeys, clock) : null;
        // Local mode knows no breaker: a closed rule's refusal asks for the shortest wait.
        // Local mode's store is not asked per decision: nothing to follow, nothing to charge back.
        WithoutStore localFallback = new WithoutStore(new LocalBucketStore(maxKeys, clock), builder.instances,
                builder.metrics, () -> WithoutStore.SHORTEST_RETRY_AFTER, builder.fallbackShareFactor, false);
        this.leases = new LeaseStore(builder.settleClient, localFallback, builder.instances, builder.settleInterval,
                builder.settleMaxSilence, maxKeys, clock);
        RateLimitStore shared = new ModeRoutingStore(denialCache != null ? denialCache : failSafe, leases);
        this.memoryUntilShared = builder.sharedAnswers == null ? null : new MemoryUntilShared(
                new LocalBucketStore(maxKeys, clock), shared, builder.sharedAnswers, builder.sharedName);
        this.store = memoryUntilShared != null ? memoryUntilShared : shared;
        this.settleInterval = builder.settleInterval;
        this.charges = builder.fallbackCharges;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Charges the shared store's buckets after the fact, down to one capacity of debt: the fallback's charge-back,
     * and the amount a response reports ({@link ResponseCharge}).
     */
    public FallbackCharges charges() {
        return charges;
    }

    /**
     * Charges for amounts responses report ({@link ResponseCharge}): {@link #charges()}, and what the store cannot
     * take held by the fail-safe's own buckets and owed to the store ({@link FailSafeStore#orHeldHere}).
     */
    public FallbackCharges responseCharges() {
        return failSafe.orHeldHere(charges);
    }

    /** The assembled store: the one to decide with. */
    public RateLimitStore store() {
        return store;
    }

    /** The shared store behind its timeout and breaker (its breaker state and fallback count, for health). */
    public FailSafeStore failSafe() {
        return failSafe;
    }

    /** The denial cache in front of exact decisions, unless switched off. */
    public Optional<DenialCache> denialCache() {
        return Optional.ofNullable(denialCache);
    }

    /** This instance's local-mode shares, to settle every {@link #settleInterval()}. */
    public LeaseStore leases() {
        return leases;
    }

    /** The memory-until-shared switch, when it was asked for; tell it {@link MemoryUntilShared#onShared()}. */
    public Optional<MemoryUntilShared> memoryUntilShared() {
        return Optional.ofNullable(memoryUntilShared);
    }

    public Duration settleInterval() {
        return settleInterval;
    }

    /** A loop settling {@link #leases()} every {@link #settleInterval()}; not started. */
    public SettleLoop settleLoop() {
        return new SettleLoop(leases, settleInterval);
    }

    /** Collects the parts; {@link #build()} checks them. Not thread-safe: build on one thread. */
    public static final class Builder {

        private RateLimitStore sharedStore;
        private SettleClient settleClient;
        private StoreBreaker breaker;
        private LiveInstances instances = LiveInstances.SINGLE;
        private StoreMetrics metrics = StoreMetrics.NONE;
        private Duration timeout = DEFAULT_TIMEOUT;
        private Duration maxWait;
        private FallbackCharges fallbackCharges = FallbackCharges.NONE;
        private double fallbackShareFactor = WithoutStore.DEFAULT_SHARE_FACTOR;
        private Duration settleInterval = DEFAULT_SETTLE_INTERVAL;
        private Duration settleMaxSilence = DEFAULT_SETTLE_MAX_SILENCE;
        private long localMaxKeys = DEFAULT_LOCAL_MAX_KEYS;
        private boolean denialCache = true;
        private BooleanSupplier sharedAnswers;
        private String sharedName;
        private LongSupplier nanoClock = System::nanoTime;

        private Builder() {
        }

        /** Required: the store shared by every instance, asked for exact decisions. */
        public Builder sharedStore(RateLimitStore sharedStore) {
            this.sharedStore = sharedStore;
            return this;
        }

        /** Required: the shared store's side of local mode. */
        public Builder settleClient(SettleClient settleClient) {
            this.settleClient = settleClient;
            return this;
        }

        /** The breaker in front of the shared store; default: {@link #DEFAULT_BREAKER_NAME}, default settings. */
        public Builder breaker(StoreBreaker breaker) {
            this.breaker = breaker;
            return this;
        }

        /** How many instances share the limits; default {@link LiveInstances#SINGLE}. */
        public Builder liveInstances(LiveInstances instances) {
            this.instances = instances;
            return this;
        }

        /** Told of every store call and fallback decision; default {@link StoreMetrics#NONE}. */
        public Builder metrics(StoreMetrics metrics) {
            this.metrics = metrics;
            return this;
        }

        /**
         * The longest an exact decision waits for the shared store; default {@link #DEFAULT_TIMEOUT}. A store that
         * times its own calls (the Redis store counts from the moment a call is sent) is given its timeout itself and
         * {@link #maxWait} here.
         */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * The longest an exact decision waits for the shared store in all, for a shared store that applies its own
         * timeout to each call once sent: the backstop for a call that cannot be sent, or a gateway too busy to read
         * its answer. Default: the {@link #timeout}, for a store that does not time itself.
         */
        public Builder maxWait(Duration maxWait) {
            this.maxWait = maxWait;
            return this;
        }

        /** Where the exact fallback's admissions are charged when the shared store answers again; default none. */
        public Builder fallbackCharges(FallbackCharges fallbackCharges) {
            this.fallbackCharges = fallbackCharges;
            return this;
        }

        /**
         * Each instance's fallback share: limit ÷ live instances × this; default
         * {@link WithoutStore#DEFAULT_SHARE_FACTOR}.
         */
        public Builder fallbackShareFactor(double fallbackShareFactor) {
            this.fallbackShareFactor = fallbackShareFactor;
            return this;
        }

        /** How often local-mode shares are settled; default {@link #DEFAULT_SETTLE_INTERVAL}. */
        public Builder settleInterval(Duration settleInterval) {
            this.settleInterval = settleInterval;
            return this;
        }

        /**
         * The longest a share this instance alone uses goes without settling; default
         * {@link #DEFAULT_SETTLE_MAX_SILENCE}. Zero (or not longer than the interval) settles every share in use at
         * every interval.
         */
        public Builder settleMaxSilence(Duration settleMaxSilence) {
            this.settleMaxSilence = settleMaxSilence;
            return this;
        }

        /** Buckets each in-memory part holds at most; default {@link #DEFAULT_LOCAL_MAX_KEYS}. */
        public Builder localMaxKeys(long localMaxKeys) {
            this.localMaxKeys = localMaxKeys;
            return this;
        }

        /** Whether denials are remembered in front of exact decisions; default true. */
        public Builder denialCache(boolean denialCache) {
            this.denialCache = denialCache;
            return this;
        }

        /**
         * Decide from this instance's memory until {@code sharedAnswers} first says the shared store answers (see
         * {@link MemoryUntilShared}); off unless called.
         *
         * @param sharedName what the log line calls the shared store when decisions move to it
         */
        public Builder memoryUntilShared(BooleanSupplier sharedAnswers, String sharedName) {
            this.sharedAnswers = sharedAnswers;
            this.sharedName = sharedName;
            return this;
        }

        /** {@link System#nanoTime} but in tests. */
        public Builder nanoClock(LongSupplier nanoClock) {
            this.nanoClock = nanoClock;
            return this;
        }

        /** The assembled stack. */
        public StoreStack build() {
            require(sharedStore != null, "the shared store (exact decisions are asked there): call sharedStore(...)");
            require(settleClient != null, "a settle client (local-mode shares are settled through it): call "
                    + "settleClient(...)");
            require(instances != null, "the live instances (each limit is shared among them): call liveInstances(...)");
            require(metrics != null, "store metrics: give StoreMetrics.NONE for none");
            require(nanoClock != null, "a clock: give System::nanoTime");
            require(positive(timeout), "a positive store timeout, but it was " + timeout);
            require(maxWait == null || positive(maxWait) && maxWait.compareTo(timeout) >= 0,
                    "a longest wait at least as long as the store timeout (" + timeout + "), but it was " + maxWait);
            require(fallbackCharges != null, "somewhere to charge the fallback's admissions: give FallbackCharges.NONE "
                    + "for none");
            require(fallbackShareFactor >= 1, "a fallback share factor of at least 1, but it was "
                    + fallbackShareFactor);
            require(positive(settleInterval), "a positive settle interval, but it was " + settleInterval);
            require(settleMaxSilence != null && !settleMaxSilence.isNegative(),
                    "a settle silence of zero or more, but it was " + settleMaxSilence);
            require(localMaxKeys >= 1, "room for at least one local bucket, but localMaxKeys was " + localMaxKeys);
            require(sharedAnswers == null || sharedName != null && !sharedName.isBlank(),
                    "a name for the shared store, for the log line when decisions move to it");
            return new StoreStack(this);
        }

        private static boolean positive(Duration duration) {
            return duration != null && !duration.isNegative() && !duration.isZero();
        }

        private static void require(boolean present, String what) {
            if (!present) {
                throw new IllegalStateException("The rate-limit store stack needs " + what);
            }
        }
    }
}

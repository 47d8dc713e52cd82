package dev.ratelimiter.core;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/**
 * One bucket in this JVM's memory. The arithmetic is the same as in {@code META-INF/scripts/ratelimit/rate_limit.lua},
 * which runs it inside Redis; the two are kept side by side deliberately so each can be read against the other.
 */
abstract sealed class BucketState {

    /** How long this bucket may sit idle before forgetting it changes no decision. */
    volatile long lifetimeNanos;

    /**
     * Tokens this bucket owed the shared store ({@link #settleOwed}) whose charge the store has not acknowledged yet:
     * a level the store reports until then does not count them, so {@link #follow} takes them off.
     */
    double uncharged;

    /**
     * Continues from the shared store's report of {@code remaining} tokens of the whole limit, less what this bucket
     * owes it and it does not know yet, at {@code share} of it (this instance's part).
     */
    final void followStore(Limit limit, long remaining, double share, long nowNanos) {
        follow(limit, Math.max(0, remaining - uncharged) * share, nowNanos);
    }

    /** {@link #settleOwed}, remembered as not yet charged. */
    final Owed settleOwedUncharged(Limit limit, long nowNanos) {
        Owed owed = settleOwed(limit, nowNanos);
        uncharged += owed.total();
        return owed;
    }

    /**
     * Spends {@code amount} whatever is left: a response's reported amount that the store could not take, held here
     * instead so that this instance's fallback refuses the client until it refilled, and owed to the store with what
     * the bucket spent on its own ({@link #settleOwed}). A token bucket goes down to one capacity of debt, a window or
     * a quota counts at most one limit more: the bounds {@code charge.lua} keeps in the store.
     */
    void debit(Limit limit, double amount, long nowNanos) {
        Preview now = preview(limit, 0, nowNanos);
        commit(new Preview(now.allowed(), now.remaining(), now.retryAfter(), now.resetAfter(),
                debited(limit, now.newValue(), amount), now.stamp(), now.previous()));
    }

    /** The state's value after {@link #debit}: a bucket's level less it, a window's or a quota's count plus it. */
    double debited(Limit limit, double value, double amount) {
        return value + Math.min(amount, limit.quota());
    }

    /** The store acknowledged a charge of {@code tokens} (or may have applied it: it is not sent again). */
    final void charged(double tokens) {
        uncharged = Math.max(0, uncharged - tokens);
    }

    /** Whether this state can count for {@code limit} (a rule may change algorithm at runtime). */
    final boolean fits(Limit limit) {
        return limit.match(KIND) == getClass();
    }

    /** The kind of state each algorithm keeps: what {@link #create} makes of it. */
    private static final Limit.Cases<Class<? extends BucketState>> KIND = new Limit.Cases<>() {

        @Override
        public Class<? extends BucketState> tokenBucket(TokenBucketLimit limit) {
            return TokenBucket.class;
        }

        @Override
        public Class<? extends BucketState> slidingWindow(SlidingWindowLimit limit) {
            return SlidingWindow.class;
        }

        @Override
        public Class<? extends BucketState> concurrency(ConcurrencyLimit limit) {
            return Concurrency.class;
        }

        @Override
        public Class<? extends BucketState> calendarQuota(CalendarQuotaLimit limit) {
            return CalendarQuota.class;
        }
    };

    /**
     * What the bucket would say to {@code cost} at {@code now}, spending nothing. A token bucket whose rate changed
     * since it was last brought up to date is rebased on the new one first (see {@link TokenBucket}).
     */
    abstract Preview preview(Limit limit, int cost, long nowNanos);

    /** What the bucket would say to {@code check} at {@code now}, without changing it. */
    Preview preview(Check check, long nowNanos) {
        return preview(check.rule().limit(), check.cost(), nowNanos);
    }

    /** Spends what {@link #preview} allowed. */
    abstract void commit(Preview preview);

    /**
     * Continues from what the shared store reported: {@code level} tokens of {@code limit} left (a token bucket), or
     * {@code level} requests' room left in the window (a sliding window), as of {@code nowNanos}. What this bucket
     * spends from here on is what {@link #owed} reports. A concurrency bucket ignores it (its permits are its own).
     */
    void follow(Limit limit, double level, long nowNanos) {
    }

    /**
     * Tokens of the shared bucket this bucket spent since it last {@linkplain #follow followed} the store (or since it
     * was made) beyond what the store refilled meanwhile: what the store must be charged for it to be where it would
     * be had it decided these requests itself. Afterwards the bucket counts afresh from its present level.
     */
    Owed settleOwed(Limit limit, long nowNanos) {
        return Owed.NOTHING;
    }

    /**
     * What a bucket owes the shared store.
     *
     * @param current tokens (a token bucket), or requests' cost counted in the window in progress (a sliding window)
     * @param previous a sliding window's cost counted in the window before; 0 for a token bucket
     */
    record Owed(double current, double previous) {

        static final Owed NOTHING = new Owed(0, 0);

        double total() {
            return current + previous;
        }
    }

    /** A bucket on a clock that reads epoch time ({@code nowNanos} is nanoseconds since 1970, as in the model tests). */
    static BucketState create(Limit limit, long nowNanos) {
        return create(limit, nowNanos, 0);
    }

    /**
     * @param epochOffsetNanos what turns the store's clock into epoch time: a calendar quota reads the calendar at
     * {@code nowNanos + epochOffsetNanos}; the other algorithms only measure durations and ignore it
     */
    static BucketState create(Limit limit, long nowNanos, long epochOffsetNanos) {
        BucketState state = limit.match(new Limit.Cases<BucketState>() {

            @Override
            public BucketState tokenBucket(TokenBucketLimit bucket) {
                return new TokenBucket(bucket, nowNanos);
            }

            @Override
            public BucketState slidingWindow(SlidingWindowLimit window) {
                return new SlidingWindow();
            }

            @Override
            public BucketState concurrency(ConcurrencyLimit concurrency) {
                return new Concurrency();
            }

            @Override
            public BucketState calendarQuota(CalendarQuotaLimit quota) {
                return new CalendarQuota(epochOffsetNanos);
            }
        });
        state.lifetimeNanos = limit.stateLifetime().toNanos();
        return state;
    }

    /** A computed outcome plus the state to store if it is committed. */
    record Preview(boolean allowed, long remaining, Duration retryAfter, Duration resetAfter, double newValue,
            long stamp, double previous, String permit) {

        Preview(boolean allowed, long remaining, Duration retryAfter, Duration resetAfter, double newValue, long stamp,
                double previous) {
            this(allowed, remaining, retryAfter, resetAfter, newValue, stamp, previous, null);
        }
    }

    /**
     * A token bucket. Its rate may change between calls (a region's share of a global rule grows or shrinks, a rule is
     * edited): the time since it was last brought up to date is then credited at the lower of the two rates, up to the
     * old capacity (the old rate over the new fill time, exact for a share), and the bucket goes on at the new one, as
     * rate_limit.lua does with its {@code r} field. Crediting that time at the new rate would hand a share grown from
     * 5 to 90 all of it at 18 times the old rate at once.
     */
    static final class TokenBucket extends BucketState {

        private double tokens;
        private long lastRefillNanos;
        /** The level it started from, and when: had it spent nothing since, it would hold that plus the refill. */
        private double startTokens;
        private long startNanos;
        /** The refill rate (tokens per nanosecond) its level and start were last brought up to date at. */
        private double perNano;

        TokenBucket(TokenBucketLimit limit, long nowNanos) {
            this.tokens = limit.capacity();
            this.lastRefillNanos = nowNanos;
            this.startTokens = tokens;
            this.startNanos = nowNanos;
            this.perNano = limit.tokensPerSecond() / 1e9;
        }

        @Override
        void follow(Limit limit, double level, long nowNanos) {
            tokens = Math.max(0, Math.min(((TokenBucketLimit) limit).capacity(), level));
            lastRefillNanos = nowNanos;
            startTokens = tokens;
            startNanos = nowNanos;
            perNano = ((TokenBucketLimit) limit).tokensPerSecond() / 1e9;
        }

        /** Brings the bucket up to {@code now} at the lower rate if {@code bucket}'s is not the one it was kept at. */
        private void followRate(TokenBucketLimit bucket, long nowNanos) {
            double rate = bucket.tokensPerSecond() / 1e9;
            if (rate == perNano) {
                return;
            }
            double credited = Math.min(rate, perNano);
            double cap = Math.min(bucket.capacity(), perNano * bucket.capacity() / rate);
            tokens = Math.min(cap, tokens + Math.max(0, nowNanos - lastRefillNanos) * credited);
            startTokens = Math.min(cap, startTokens + Math.max(0, nowNanos - startNanos) * credited);
            lastRefillNanos = Math.max(lastRefillNanos, nowNanos);
            startNanos = Math.max(startNanos, nowNanos);
            perNano = rate;
        }

        @Override
        Owed settleOwed(Limit limit, long nowNanos) {
            TokenBucketLimit bucket = (TokenBucketLimit) limit;
            followRate(bucket, nowNanos);
            double level = levelAt(bucket, nowNanos);
            double untouched = Math.min(bucket.capacity(),
                    startTokens + Math.max(0, nowNanos - startNanos) * bucket.tokensPerSecond() / 1e9);
            tokens = level;
            lastRefillNanos = Math.max(lastRefillNanos, nowNanos);
            startTokens = level;
            startNanos = lastRefillNanos;
            return new Owed(Math.max(0, untouched - level), 0);
        }

        private double levelAt(TokenBucketLimit bucket, long nowNanos) {
            return Math.min(bucket.capacity(),
                    tokens + Math.max(0, nowNanos - lastRefillNanos) * bucket.tokensPerSecond() / 1e9);
        }

        @Override
        Preview preview(Limit limit, int cost, long nowNanos) {
            TokenBucketLimit bucket = (TokenBucketLimit) limit;
            followRate(bucket, nowNanos);
            double available = levelAt(bucket, nowNanos);
            boolean allowed = available >= cost;
            double after = allowed ? available - cost : available;
            Duration retry = allowed ? Duration.ZERO : Duration.ofNanos((long) Math.ceil((cost - available) / perNano));
            Duration reset = Duration.ofNanos((long) Math.ceil((bucket.capacity() - after) / perNano));
            return new Preview(allowed, (long) Math.max(0, Math.floor(after)), retry, reset, after, nowNanos, 0);
        }

        /** Down to one capacity of debt: refused until it refilled past it, never for more than twice its fill time. */
        @Override
        double debited(Limit limit, double value, double amount) {
            return Math.max(-((TokenBucketLimit) limit).capacity(), value - amount);
        }

        @Override
        void commit(Preview preview) {
            tokens = preview.newValue();
            lastRefillNanos = preview.stamp();
        }
    }

    static final class SlidingWindow extends BucketState {

        private long windowIndex = Long.MIN_VALUE;
        private double current;
        private double previous;
        /**
         * Requests' cost counted since it last followed the store (or was made), by window: in window
         * {@code spentIndex} and in the one before. Older windows count in no estimate any more, here or in the store.
         */
        private long spentIndex = Long.MIN_VALUE;
        private double spentInIndex;
        private double spentBefore;

        @Override
        void follow(Limit limit, double level, long nowNanos) {
            SlidingWindowLimit window = (SlidingWindowLimit) limit;
            // The store's estimate, all counted in this window: the room left is the same, and it only grows from here.
            windowIndex = Math.floorDiv(nowNanos, window.window().toNanos());
            current = Math.max(0, window.limit() - Math.max(0, level));
            previous = 0;
            forgetSpent();
        }

        /**
         * What it counted on its own, by window as seen now: the window in progress and the one before (the store
         * adds each to its own windows of the same age; they are not aligned with these to the instant).
         */
        @Override
        Owed settleOwed(Limit limit, long nowNanos) {
            long index = Math.floorDiv(nowNanos, ((SlidingWindowLimit) limit).window().toNanos());
            Owed owed = spentIndex == index ? new Owed(spentInIndex, spentBefore)
                    : spentIndex == index - 1 ? new Owed(0, spentInIndex) : Owed.NOTHING;
            forgetSpent();
            return owed;
        }

        private void forgetSpent() {
            spentIndex = Long.MIN_VALUE;
            spentInIndex = 0;
            spentBefore = 0;
        }

        @Override
        Preview preview(Limit limit, int cost, long nowNanos) {
            SlidingWindowLimit window = (SlidingWindowLimit) limit;
            long length = window.window().toNanos();
            long index = Math.floorDiv(nowNanos, length);
            double cur = 0;
            double prev = 0;
            if (windowIndex == index) {
                cur = current;
                prev = previous;
            }
            else if (windowIndex == index - 1) {
                prev = current;
            }
            double elapsed = (double) (nowNanos - index * length) / length;
            double estimate = prev * (1 - elapsed) + cur;
            boolean allowed = estimate + cost <= window.limit();
            double spent = allowed ? cost : 0;
            long remaining = (long) Math.floor(window.limit() - estimate - spent);
            Duration retry = allowed ? Duration.ZERO : retryAfter(window.limit(), cost, cur, prev, elapsed, length);
            Duration reset = cur + spent > 0 ? Duration.ofNanos((long) ((2 - elapsed) * length))
                    : prev > 0 ? Duration.ofNanos((long) ((1 - elapsed) * length)) : Duration.ZERO;
            return new Preview(allowed, remaining, retry, reset, cur + spent, index, prev);
        }

        /** Time until the weighted estimate leaves room for {@code cost}, this window or the next. */
        private static Duration retryAfter(long limit, int cost, double cur, double prev, double elapsed, long length) {
            if (cur + cost <= limit && prev > 0) {
                double needed = 1 - (limit - cur - cost) / prev;
                return Duration.ofNanos((long) Math.ceil(Math.max(0, needed - elapsed) * length));
            }
            double nextNeeded = cur > 0 ? Math.max(0, 1 - (limit - cost) / cur) : 0;
            return Duration.ofNanos((long) Math.ceil((1 - elapsed + nextNeeded) * length));
        }

        @Override
        void commit(Preview preview) {
            double spent = preview.newValue() - (windowIndex == preview.stamp() ? current : 0);
            if (preview.stamp() != spentIndex) {
                spentBefore = preview.stamp() == spentIndex + 1 ? spentInIndex : 0;
                spentInIndex = 0;
                spentIndex = preview.stamp();
            }
            spentInIndex += spent;
            windowIndex = preview.stamp();
            current = preview.newValue();
            previous = preview.previous();
        }
    }

    /**
     * A calendar quota's count in the period in progress: the Lua branch {@code kind == 'q'} keeps the same count in a
     * key of its own per period; here the period's start is kept beside the count, and a count of another period is
     * zero.
     */
    static final class CalendarQuota extends BucketState {

        private final long epochOffsetNanos;
        /** Start of the period {@link #count} belongs to (epoch ns); none yet. */
        private long periodStart = Long.MIN_VALUE;
        private double count;
        /** Spent since it last followed the store (or was made), in period {@link #spentPeriod}. */
        private long spentPeriod = Long.MIN_VALUE;
        private double spent;

        CalendarQuota(long epochOffsetNanos) {
            this.epochOffsetNanos = epochOffsetNanos;
        }

        private CalendarPeriods.Span span(Limit limit, long nowNanos) {
            long epochNanos = nowNanos + epochOffsetNanos;
            return ((CalendarQuotaLimit) limit).spanAt(java.time.Instant.ofEpochSecond(0, epochNanos));
        }

        private static long nanos(java.time.Instant instant) {
            return instant.getEpochSecond() * 1_000_000_000L + instant.getNano();
        }

        @Override
        Preview preview(Limit limit, int cost, long nowNanos) {
            CalendarPeriods.Span span = span(limit, nowNanos);
            long start = nanos(span.start());
            double used = periodStart == start ? count : 0;
            boolean allowed = used + cost <= limit.quota();
            double after = allowed ? used + cost : used;
            Duration toBoundary = Duration.ofNanos(Math.max(0, nanos(span.end()) - nowNanos - epochOffsetNanos));
            return new Preview(allowed, (long) Math.max(0, limit.quota() - after), allowed ? Duration.ZERO
                    : toBoundary, toBoundary, after, start, 0);
        }

        @Override
        void commit(Preview preview) {
            double before = periodStart == preview.stamp() ? count : 0;
            if (spentPeriod != preview.stamp()) {
                spentPeriod = preview.stamp();
                spent = 0;
            }
            spent += preview.newValue() - before;
            periodStart = preview.stamp();
            count = preview.newValue();
        }

        /** The store's room left in the period in progress: all else of it counted. */
        @Override
        void follow(Limit limit, double level, long nowNanos) {
            periodStart = nanos(span(limit, nowNanos).start());
            count = Math.max(0, limit.quota() - Math.max(0, level));
            spentPeriod = Long.MIN_VALUE;
            spent = 0;
        }

        /**
         * What it counted on its own in the period in progress; spending of a period that has ended is owed to nobody
         * (its counter in the store no longer decides anything).
         */
        @Override
        Owed settleOwed(Limit limit, long nowNanos) {
            Owed owed = spentPeriod == nanos(span(limit, nowNanos).start()) ? new Owed(spent, 0) : Owed.NOTHING;
            spentPeriod = Long.MIN_VALUE;
            spent = 0;
            return owed;
        }
    }

    /**
     * Permits in progress, by id, so that giving one back is exact and idempotent. Held permits do not expire here:
     * they belong to requests of this JVM, which always give them back (leases guard against dead instances, which
     * cannot happen within one process).
     */
    static final class Concurrency extends BucketState {

        /** Permits are not spent by amounts: nothing to hold. */
        @Override
        void debit(Limit limit, double amount, long nowNanos) {
        }


        /** What a store with no room for another permit bucket answers with: every request refused. */
        static final Concurrency NO_ROOM = new Concurrency(false);

        private final Set<String> permits = new HashSet<>();
        private final boolean room;
        /** Dropped by its store, holding no permit: a request that found it must look the bucket up again. */
        boolean retired;

        Concurrency() {
            this(true);
        }

        private Concurrency(boolean room) {
            this.room = room;
        }

        @Override
        Preview preview(Limit limit, int cost, long nowNanos) {
            throw new UnsupportedOperationException("a concurrency check needs its permit id");
        }

        @Override
        Preview preview(Check check, long nowNanos) {
            long max = check.rule().limit().quota();
            boolean allowed = room && (permits.contains(check.permit()) || permits.size() < max);
            long remaining = !room ? 0 : max - permits.size() - (allowed && !permits.contains(check.permit()) ? 1 : 0);
            return new Preview(allowed, remaining, allowed ? Duration.ZERO : ConcurrencyLimit.RETRY_HINT,
                    Duration.ZERO, 0, nowNanos, 0, check.permit());
        }

        @Override
        void commit(Preview preview) {
            permits.add(preview.permit());
        }

        /** Gives a permit back; false when it was not held. */
        boolean release(String permit) {
            return permits.remove(permit);
        }

        boolean holdsPermits() {
            return !permits.isEmpty();
        }

        int inProgress() {
            return permits.size();
        }
    }
}

package dev.ratelimiter.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.FallbackReason;
import dev.ratelimiter.core.SettleClient;
import dev.ratelimiter.core.StoreMetrics;
import dev.ratelimiter.core.Verdict;

/**
 * What the whole simulated fleet did, counted as it happens and read as {@link Snapshot}s: the decisions asked, made
 * and how they ended; the store calls and fallbacks every instance's stack reported (it is their
 * {@link StoreMetrics}); and the settles their {@link CountingSettleClient}s passed on.
 */
final class FleetTally implements StoreMetrics {

    /** Plain counters. */
    enum Count {
        /** Decisions due that the drivers could not make in time (open loop: they are not made later). */
        SKIPPED,
        /** Decisions handed to an instance's store. */
        MADE,
        /** Verdicts that refused. */
        REFUSED,
        /** Decisions whose Mono failed (none should: the stack answers every decision). */
        ERRORS,
        /** Settle calls of the instances (each for all their reported buckets). */
        SETTLES,
        /** Settles answered (each bucket settled or not). */
        ANSWERED,
        /** Bucket reports handed to the settle clients: the bucket-settles the instances asked for. */
        REPORTS,
        /** Reports the store settled. */
        SETTLED,
        /** Reports never sent (the connection was down): Redis saw nothing of them. */
        NOT_SENT,
        /** Reports sent but not answered: Redis may have settled them. */
        UNKNOWN,
        /** Reports of settles that failed whole or the lease store gave up waiting for: Redis may have settled them. */
        ABANDONED,
        /** Time from the start of each answered settle to its answer, summed. */
        SETTLE_NANOS,
        /** The longest settle. */
        SETTLE_MAX_NANOS
    }

    private final LongAdder[] counts = adders(Count.values().length);
    private final LongAdder[] sources = adders(Verdict.Source.values().length);
    private final LongAdder[] storeCalls = adders(StoreMetrics.Outcome.values().length);
    private final LongAdder[] fallbacks = adders(FallbackReason.values().length);
    private final AtomicLong longestSettle = new AtomicLong();

    private static LongAdder[] adders(int n) {
        LongAdder[] adders = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            adders[i] = new LongAdder();
        }
        return adders;
    }

    void add(Count count, long amount) {
        counts[count.ordinal()].add(amount);
    }

    void verdict(Verdict verdict) {
        sources[verdict.source().ordinal()].increment();
        if (!verdict.allowed()) {
            counts[Count.REFUSED.ordinal()].increment();
        }
    }

    void settled(List<SettleClient.Grant> grants, long nanos) {
        long settled = 0;
        long notSent = 0;
        for (SettleClient.Grant grant : grants) {
            settled += grant.settled() ? 1 : 0;
            notSent += grant.outcome() == SettleClient.Outcome.NOT_SENT ? 1 : 0;
        }
        add(Count.ANSWERED, 1);
        add(Count.SETTLED, settled);
        add(Count.NOT_SENT, notSent);
        add(Count.UNKNOWN, grants.size() - settled - notSent);
        add(Count.SETTLE_NANOS, nanos);
        longestSettle.accumulateAndGet(nanos, Math::max);
    }

    @Override
    public void storeCall(Outcome outcome, Duration latency) {
        storeCalls[outcome.ordinal()].increment();
    }

    @Override
    public void fallbackDecision(FailureMode mode, FallbackReason reason) {
        fallbacks[reason.ordinal()].increment();
    }

    /** The counts now; the longest settle since the last snapshot. */
    Snapshot snapshot() {
        long[] all = sum(counts);
        all[Count.SETTLE_MAX_NANOS.ordinal()] = longestSettle.getAndSet(0);
        return new Snapshot(all, sum(sources), sum(storeCalls), sum(fallbacks));
    }

    private static long[] sum(LongAdder[] adders) {
        long[] values = new long[adders.length];
        for (int i = 0; i < adders.length; i++) {
            values[i] = adders[i].sum();
        }
        return values;
    }

    /** Counts at one moment, or between two ({@link #minus}). */
    record Snapshot(long[] counts, long[] sources, long[] storeCalls, long[] fallbacks) {

        long get(Count count) {
            return counts[count.ordinal()];
        }

        long source(Verdict.Source source) {
            return sources[source.ordinal()];
        }

        long fallbacks(FallbackReason reason) {
            return fallbacks[reason.ordinal()];
        }

        long storeCalls(StoreMetrics.Outcome outcome) {
            return storeCalls[outcome.ordinal()];
        }

        /** Every verdict counted. */
        long verdicts() {
            long all = 0;
            for (long n : sources) {
                all += n;
            }
            return all;
        }

        /** What happened after {@code before}; the longest settle is this snapshot's own. */
        Snapshot minus(Snapshot before) {
            long[] difference = minus(counts, before.counts);
            difference[Count.SETTLE_MAX_NANOS.ordinal()] = get(Count.SETTLE_MAX_NANOS);
            return new Snapshot(difference, minus(sources, before.sources), minus(storeCalls, before.storeCalls),
                    minus(fallbacks, before.fallbacks));
        }

        private static long[] minus(long[] a, long[] b) {
            long[] difference = new long[a.length];
            for (int i = 0; i < a.length; i++) {
                difference[i] = a[i] - b[i];
            }
            return difference;
        }
    }
}

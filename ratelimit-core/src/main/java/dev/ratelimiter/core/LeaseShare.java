package dev.ratelimiter.core;

import java.time.Duration;

/**
 * This instance's share of one local-mode bucket ({@link LeaseStore}) and its bookkeeping: what it may spend now,
 * what it owes the store for provisional spending, what it reports at a settle and how the store's grant is applied.
 *
 * <p>Guarded by its own monitor. The two halves of a decision ({@link #spend}, {@link #outcome}) are called holding it
 * — a request's shares are locked together, in one order, so that its rules are decided all or nothing; the settle
 * side ({@link #report}, {@link #apply}, {@link #restore}, {@link #refund}) takes it itself.
 */
final class LeaseShare {

    private TokenBucketLimit limit;
    private double tokens;
    private long demand;
    private long need;
    private double returned;
    private boolean provisional = true;
    private double provisionalSpent;
    private double reportedProvisional;
    private long storeRemaining;
    private long lastUsedNanos;
    /** Tokens asked for (refused requests included) since the last report: the rate this share is spent at. */
    private double asked;
    /** When the first request since the last report came: the span its demand is spread over. */
    private long firstUsedNanos;
    /** What the last report took out of {@link #asked} and when its first request came: put back if not settled. */
    private double reportedAsked;
    private long reportedFirstUsedNanos;
    private long reportedBeforeNanos;
    /** Whether a request was refused since the last report: the share ran short, it settles at the next tick. */
    private boolean ranShort;
    /** When this share was last reported; 0 before its first report. */
    private long reportedNanos;
    /** Whether the store let this share go silent at the last settle (see {@link #canWait}). */
    private boolean silent;
    /** A report of this share was not settled: the next tick reports again, whatever the share holds. */
    private boolean mustReport;
    /** The mean time between requests over the last reported window: how long a pause means the client has gone. */
    private long gapNanos;

    LeaseShare(TokenBucketLimit limit, int liveInstances, int cost) {
        this.limit = limit;
        // at least one request's worth (when the bucket holds one), so that a first request can pass here
        this.tokens = Math.max(Math.min(Math.max(1, cost), limit.capacity()),
                Math.floor((double) limit.capacity() / liveInstances));
    }

    /** A share reported at a settle, and whether it was provisional when reported. */
    record Reported(SettleClient.Report report, boolean wasProvisional) {
    }

    /** The first half of a decision, holding the monitor: refill a dormant share, note the demand. */
    void spend(int cost, long now, Duration interval, LiveInstances instances) {
        refillIfDormant(cost, now, interval, instances);
        lastUsedNanos = now;
        if (demand == 0) {
            firstUsedNanos = now;
        }
        demand++;
        asked += cost;
        need = Math.max(need, cost);
    }

    /** Holding the monitor, between the halves: whether this share refuses the check (a shadow check never does). */
    boolean refuses(Check check) {
        return tokens < check.cost() && !check.shadow();
    }

    /**
     * The second half, holding the monitor: takes the cost unless the request is refused by any of its rules
     * ({@code enforcedDenial}). A refusal asks the client back after one settle interval.
     */
    RuleOutcome outcome(Check check, boolean enforcedDenial, Duration interval) {
        limit = (TokenBucketLimit) check.rule().limit();
        boolean allowed = tokens >= check.cost();
        if (allowed && !enforcedDenial) {
            tokens -= check.cost();
            if (provisional) {
                provisionalSpent += check.cost();
            }
        }
        ranShort |= !allowed;
        long remaining = (long) Math.floor(tokens) + storeRemaining;
        Duration retry = allowed ? Duration.ZERO : interval;
        Duration reset = Duration.ofNanos((long) Math.ceil(Math.max(0, limit.capacity() - remaining)
                / limit.tokensPerSecond() * 1e9));
        return new RuleOutcome(check, allowed, remaining, retry, reset);
    }

    /** See {@link LeaseStore}: a dry share idle for more than an interval refills at its fair part of the rate. */
    private void refillIfDormant(int cost, long now, Duration interval, LiveInstances instances) {
        long idle = now - lastUsedNanos;
        if (tokens >= cost || provisional || demand > 0 || idle <= interval.toNanos()) {
            return;
        }
        int live = Math.max(1, instances.count());
        // never below one request's cost, or a dormant client of a costly route could never pass anywhere
        double fairShare = Math.max(Math.min(cost, limit.capacity()), Math.floor((double) limit.capacity() / live));
        double refill = Math.floor(idle / 1e9 * limit.tokensPerSecond() / live);
        double refilled = Math.min(fairShare, refill);
        if (refilled > tokens) {
            tokens = refilled;
            provisional = true;
        }
    }

    /** Gives back a spend the exact store refused to go with (the request was denied after all). */
    synchronized void refund(int cost) {
        tokens += cost;
        if (provisional) {
            provisionalSpent = Math.max(0, provisionalSpent - cost);
        }
    }

    /**
     * What this share tells the store at a settle, or null when there is nothing to tell, or nothing it needs to tell
     * yet ({@link #canWait}); what it reports as given back or used is taken out of the share.
     *
     * @param now the settle's time on the lease store's clock
     * @param interval the settle interval
     * @param silence the longest this share may go unreported while the store finds it alone on its bucket
     */
    synchronized Reported report(BucketKey bucket, LiveInstances instances, long now, Duration interval,
            Duration silence) {
        if (demand == 0 && provisionalSpent == 0 && returned == 0 && (tokens == 0 || provisional)) {
            // Nothing to tell the store: no use, nothing to give back or pay for, and no granted tokens to return (a
            // dormant key's reactivation allowance is its own, charged only once spent). Without this every sparse
            // client was reported at every settle: settle cost grew with the keys ever seen instead of those in use.
            return null;
        }
        if (canWait(now, interval, silence)) {
            return null;
        }
        long since = reportedNanos == 0 ? interval.toNanos() : Math.max(1, now - reportedNanos);
        if (demand > 0 && now - lastUsedNanos <= idleAfter(interval, silence)) {
            // measured while the client was here: a report the pause itself brought keeps the estimate it had
            gapNanos = since / demand;
        }
        // Demand weighs this instance against the others: after a silence it is a rate per interval again, over the
        // span its requests came in (a burst after a quiet spell is a burst, not one request an interval).
        long span = demand == 0 ? since : Math.min(since, Math.max(interval.toNanos(), now - firstUsedNanos));
        long perInterval = span <= interval.toNanos() * 3 / 2 || demand == 0 ? demand
                : Math.max(1, Math.round(demand * (double) interval.toNanos() / span));
        double perNano = asked / span;
        long want = silence.isZero() ? Long.MAX_VALUE
                : need + (long) Math.ceil(perNano * silence.toNanos() * WANT_MARGIN);
        double giving = returned;
        boolean wasProvisional = provisional;
        double reactivation = 0;
        if (demand == 0 && !provisional) {
            // Idle here: give the whole share back so that the instances the traffic moved to can use it, but keep
            // the right to spend what was given back (charged at the next settle, like a new key's provisional
            // spend), so that a sparse client's next request is not refused for having paused.
            giving += tokens;
            reactivation = Math.min(tokens, Math.floor((double) limit.capacity() / Math.max(1, instances.count())));
            tokens = 0;
        }
        SettleClient.Report report = new SettleClient.Report(bucket, limit, perInterval, provisional ? 0 : tokens,
                giving, provisionalSpent, Math.min(need, limit.capacity()), want, silence.toNanos() / 1_000);
        if (reactivation > 0) {
            provisional = true;
            tokens = reactivation;
        }
        demand = 0;
        need = 0;
        returned = 0;
        reportedAsked = asked;
        reportedFirstUsedNanos = firstUsedNanos;
        asked = 0;
        ranShort = false;
        mustReport = false;
        reportedBeforeNanos = reportedNanos;
        reportedNanos = now;
        reportedProvisional = provisionalSpent;
        return new Reported(report, wasProvisional);
    }

    /**
     * Whether this share can skip a settle: the store let it go silent (no other instance holds a share or asks for
     * one, so there is nobody to be fair to, its client is far from its limit, and it holds at most half the bucket),
     * it owes and returns nothing, no request ran short, the silence it announced is not over, and what it holds lasts {@value #TICKS_AHEAD} more intervals at
     * the rate it is spent at (it settles early as it approaches the end of its share). An idle share waits too: it
     * gives its tokens back when its silence ends. Demand and spending go on adding up until the report.
     */
    private boolean canWait(long now, Duration interval, Duration silence) {
        if (!silent || mustReport || ranShort || provisional || provisionalSpent > 0 || returned > 0
                || reportedNanos == 0) {
            return false;
        }
        long since = now - reportedNanos;
        if ((demand > 0 || tokens > 0) && now - lastUsedNanos > idleAfter(interval, silence)) {
            // The client paused far longer than its requests are apart: it may have moved to another instance, which
            // should find these tokens in the pool (a pause of one interval, as when settling every interval, would
            // give a client at a few requests a second back and forth at every other settle).
            return false;
        }
        // One interval short of the silence: the next tick may come late, and the store counts the instance dead only
        // a stale period after the silence, so a tick that misses this one still reports in time.
        if (since >= silence.toNanos() - interval.toNanos()) {
            return false;
        }
        double perNano = asked / Math.max(1, since);
        return tokens >= need + perNano * interval.toNanos() * TICKS_AHEAD;
    }

    /** A pause of {@value #IDLE_GAPS} mean gaps between requests, at least an interval, at most the silence. */
    private long idleAfter(Duration interval, Duration silence) {
        long pause = gapNanos > Long.MAX_VALUE / IDLE_GAPS ? Long.MAX_VALUE : gapNanos * IDLE_GAPS;
        return Math.min(silence.toNanos(), Math.max(interval.toNanos(), pause));
    }

    /**
     * Mean gaps a pause must last before the client counts as gone from this instance: a Poisson client pauses that
     * long once in 400 gaps, so a key at 7 requests a second gives its share back about once a minute for nothing.
     */
    static final int IDLE_GAPS = 6;

    /** Intervals ahead a waiting share must last at its current rate: the next tick, its answer, and a margin. */
    static final int TICKS_AHEAD = 3;

    /**
     * What a share alone on its bucket expects to spend in a silence, as a multiple of its rate: the store lets it go
     * silent only when that is at most half the bucket (a client far from its limit).
     */
    static final double WANT_MARGIN = 1.5;

    /** Applies the store's grant for {@code reported}, a settled bucket. */
    synchronized void apply(SettleClient.Grant grant, Reported reported) {
        provisionalSpent -= reportedProvisional;
        reportedProvisional = 0;
        // A provisional share that saw no traffic got no grant: it keeps its allowance until it is used.
        boolean used = reported.report().demand() > 0;
        double granted = grant.grant();
        if (provisional && reported.wasProvisional() && used) {
            // The provisional allowance was never granted: drop what is left of it, keep only the grant. What was
            // spent from it while this settle was in flight is paid from the grant first (the store sized the grant
            // without it); what the grant does not cover is charged next settle.
            double covered = Math.min(granted, provisionalSpent);
            granted -= covered;
            provisionalSpent -= covered;
            provisional = false;
            tokens = 0;
        }
        tokens += granted;
        long giveBack = Math.min(grant.giveBack(), (long) Math.floor(tokens));
        tokens -= giveBack;
        returned += giveBack;
        storeRemaining = grant.storeRemaining();
        silent = grant.silent();
    }

    /**
     * Puts back what a report that the store did not settle took from this share: the demand always (it only weighs
     * the fair part), the tokens given back only when the report was never sent. A report that may have run in the
     * store has added them to its pool already; handing them back again would let up to a capacity more through.
     * Dropped, they are missing only until the pool refills into them (its cap counts only the shares held).
     * Provisional spend is not marked paid, so it is charged again at the next settle: at worst twice, never not at
     * all.
     */
    synchronized void restore(SettleClient.Report report, boolean neverSent) {
        if (report.demand() > 0) {
            firstUsedNanos = demand == 0 ? reportedFirstUsedNanos : Math.min(firstUsedNanos, reportedFirstUsedNanos);
        }
        asked += reportedAsked;
        reportedAsked = 0;
        // the demand and asking put back are spread over the time since the report before
        reportedNanos = reportedBeforeNanos;
        demand += report.demand();
        need = Math.max(need, report.need());
        // The store may not have seen the report: it may count this instance silent since the one before, so no
        // waiting until a settle has gone through.
        mustReport = true;
        if (neverSent) {
            returned += report.returned();
        }
    }
}

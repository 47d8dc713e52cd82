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
        demand++;
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
     * What this share tells the store at a settle, or null when there is nothing to tell; what it reports as given
     * back or used is taken out of the share.
     */
    synchronized Reported report(BucketKey bucket, LiveInstances instances) {
        if (demand == 0 && provisionalSpent == 0 && returned == 0 && (tokens == 0 || provisional)) {
            // Nothing to tell the store: no use, nothing to give back or pay for, and no granted tokens to return (a
            // dormant key's reactivation allowance is its own, charged only once spent). Without this every sparse
            // client was reported at every settle: settle cost grew with the keys ever seen instead of those in use.
            return null;
        }
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
        SettleClient.Report report = new SettleClient.Report(bucket, limit, demand, provisional ? 0 : tokens, giving,
                provisionalSpent, Math.min(need, limit.capacity()));
        if (reactivation > 0) {
            provisional = true;
            tokens = reactivation;
        }
        demand = 0;
        need = 0;
        returned = 0;
        reportedProvisional = provisionalSpent;
        return new Reported(report, wasProvisional);
    }

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
        demand += report.demand();
        need = Math.max(need, report.need());
        if (neverSent) {
            returned += report.returned();
        }
    }
}

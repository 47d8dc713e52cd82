package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Local mode: each instance decides from its own share of every bucket and settles with the store once per interval,
 * in one call for all keys ({@link #settle()}). No store call is made on the request path, so store calls per
 * instance are bounded by the settle rate whatever the traffic, refusals included.
 *
 * <p>The store holds each bucket's pool and hands it out: shares are taken from the pool when granted, so the pool
 * plus every instance's share never exceeds the bucket, and a client never gets more than its quota. Each instance's
 * share is sized by the traffic it saw in the last interval; an instance holding more than its share gives the rest
 * back. When a client's traffic moves between instances, the new instance may refuse a little early until the next
 * settle — the price of keeping the store off the request path.
 *
 * <p>A key seen for the first time has no share yet. Until its first settle, the instance may spend a provisional
 * capacity ÷ live instances, which the store deducts at the settle. Across the fleet that is at most one full bucket
 * for a key new everywhere, which a new key has; a key already busy on other instances can be overspent once by
 * that provisional amount, which the store records as debt repaid from later refills.
 *
 * <p>A share that saw no request for longer than an interval and ran dry refills locally, provisionally, at its fair
 * part of the bucket's rate (rate ÷ live instances, up to capacity ÷ live instances), charged at the next settle like
 * a new key's allowance. Without it a sparse client whose share was emptied (say, by settles that timed out while
 * Redis was paused, whose charges Redis applied later) was refused once on its next request however long it had
 * waited: the store's pool had refilled, but nothing told this instance. Over time that adds no more than the rate.
 *
 * <p>When settling has failed for three intervals, decisions fall to {@link WithoutStore} (each rule's failure mode).
 */
public final class LeaseStore {

    private static final Logger logger = LoggerFactory.getLogger(LeaseStore.class);

    private final SettleClient client;
    private final WithoutStore withoutStore;
    private final LiveInstances instances;
    private final Duration interval;
    private final LongSupplier nanoClock;
    private final Cache<BucketKey, Share> shares;
    private volatile long lastSettledNanos;
    private volatile boolean settling;

    public LeaseStore(SettleClient client, WithoutStore withoutStore, LiveInstances instances, Duration interval,
            long maxKeys, LongSupplier nanoClock) {
        this.client = client;
        this.withoutStore = withoutStore;
        this.instances = instances;
        this.interval = interval;
        this.nanoClock = nanoClock;
        this.lastSettledNanos = nanoClock.getAsLong();
        // Idle shares are given back at the settle after their last use; an entry is only dropped long after that.
        this.shares = Caffeine.newBuilder().maximumSize(maxKeys).expireAfterAccess(interval.multipliedBy(100))
                .ticker(nanoClock::getAsLong).build();
    }

    /** Decides local-mode checks from this instance's shares, all or nothing. Never waits on the store. */
    public Verdict decide(List<Check> checks) {
        long now = nanoClock.getAsLong();
        if (now - lastSettledNanos > interval.toNanos() * 3) {
            return withoutStore.decide(checks);
        }
        if (checks.size() == 1) {
            // The common request (one rule applies): one monitor, nothing to order, one outcome.
            Check check = checks.get(0);
            Share share = share(check);
            synchronized (share) {
                spend(check, share, now);
                boolean enforcedDenial = share.tokens < check.cost() && !check.shadow();
                return Verdict.evaluated(List.of(outcome(check, share, enforcedDenial)), Verdict.Source.LOCAL);
            }
        }
        List<Share> held = new ArrayList<>(checks.size());
        for (Check check : checks) {
            held.add(share(check));
        }
        return Verdict.evaluated(OrderedLocks.holding(checks, held, () -> decide(checks, held, now)),
                Verdict.Source.LOCAL);
    }

    private Share share(Check check) {
        // Looked up first without the loader: a capturing lambda per decision is an allocation on the hot path.
        Share share = shares.getIfPresent(check.bucket());
        return share != null ? share : shares.get(check.bucket(), k -> new Share((TokenBucketLimit) check.rule()
                .limit(), Math.max(1, instances.count()), check.cost()));
    }

    /** Called holding every share's monitor. */
    private List<RuleOutcome> decide(List<Check> checks, List<Share> held, long now) {
        boolean enforcedDenial = false;
        for (int i = 0; i < checks.size(); i++) {
            Check check = checks.get(i);
            Share share = held.get(i);
            spend(check, share, now);
            enforcedDenial |= share.tokens < check.cost() && !check.shadow();
        }
        List<RuleOutcome> outcomes = new ArrayList<>(checks.size());
        for (int i = 0; i < checks.size(); i++) {
            outcomes.add(outcome(checks.get(i), held.get(i), enforcedDenial));
        }
        return outcomes;
    }

    /** The first half of a decision, holding the share's monitor: refill a dormant share, note the demand. */
    private void spend(Check check, Share share, long now) {
        refillIfDormant(share, check.cost(), now);
        share.lastUsedNanos = now;
        share.demand++;
        share.need = Math.max(share.need, check.cost());
    }

    /**
     * The second half, holding the share's monitor: takes the cost unless the request is refused by any of its rules
     * ({@code enforcedDenial}).
     */
    private RuleOutcome outcome(Check check, Share share, boolean enforcedDenial) {
        share.limit = (TokenBucketLimit) check.rule().limit();
        boolean allowed = share.tokens >= check.cost();
        if (allowed && !enforcedDenial) {
            share.tokens -= check.cost();
            if (share.provisional) {
                share.provisionalSpent += check.cost();
            }
        }
        long remaining = (long) Math.floor(share.tokens) + share.storeRemaining;
        Duration retry = allowed ? Duration.ZERO : interval;
        Duration reset = Duration.ofNanos((long) Math.ceil(Math.max(0, share.limit.capacity() - remaining)
                / share.limit.tokensPerSecond() * 1e9));
        return new RuleOutcome(check, allowed, remaining, retry, reset);
    }

    /** See the class comment: a dry share idle for more than an interval refills at its fair part of the rate. */
    private void refillIfDormant(Share share, int cost, long now) {
        long idle = now - share.lastUsedNanos;
        if (share.tokens >= cost || share.provisional || share.demand > 0 || idle <= interval.toNanos()) {
            return;
        }
        int live = Math.max(1, instances.count());
        // never below one request's cost, or a dormant client of a costly route could never pass anywhere
        double fairShare = Math.max(Math.min(cost, share.limit.capacity()),
                Math.floor((double) share.limit.capacity() / live));
        double refill = Math.floor(idle / 1e9 * share.limit.tokensPerSecond() / live);
        double tokens = Math.min(fairShare, refill);
        if (tokens > share.tokens) {
            share.tokens = tokens;
            share.provisional = true;
        }
    }

    /** Gives back a spend the exact store refused to go with (the request was denied after all). */
    public void refund(List<Check> checks) {
        for (Check check : checks) {
            Share share = shares.getIfPresent(check.bucket());
            if (share != null) {
                synchronized (share) {
                    share.tokens += check.cost();
                    if (share.provisional) {
                        share.provisionalSpent = Math.max(0, share.provisionalSpent - check.cost());
                    }
                }
            }
        }
    }

    /**
     * One settle: reports every share with activity or tokens, in one store call, and applies the grants. Returns
     * the number of buckets settled; never fails (a failed settle leaves the shares as they were).
     */
    public Mono<Integer> settle() {
        if (settling) {
            return Mono.just(0);
        }
        List<BucketKey> keys = new ArrayList<>();
        List<SettleClient.Report> reports = new ArrayList<>();
        List<Boolean> provisionalAtReport = new ArrayList<>();
        for (Map.Entry<BucketKey, Share> entry : shares.asMap().entrySet()) {
            Share share = entry.getValue();
            synchronized (share) {
                if (share.demand == 0 && share.provisionalSpent == 0 && share.returned == 0
                        && (share.tokens == 0 || share.provisional)) {
                    // Nothing to tell the store: no use, nothing to give back or pay for, and no granted tokens to
                    // return (a dormant key's reactivation allowance is its own, charged only once spent). Without
                    // this every sparse client was reported at every settle: settle cost grew with the keys ever
                    // seen instead of the keys in use.
                    continue;
                }
                double returned = share.returned;
                boolean wasProvisional = share.provisional;
                double reactivation = 0;
                if (share.demand == 0 && !share.provisional) {
                    // Idle here: give the whole share back so that the instances the traffic moved to can use it,
                    // but keep the right to spend what was given back (charged at the next settle, like a new key's
                    // provisional spend), so that a sparse client's next request is not refused for having paused.
                    returned += share.tokens;
                    reactivation = Math.min(share.tokens,
                            Math.floor((double) share.limit.capacity() / Math.max(1, instances.count())));
                    share.tokens = 0;
                }
                reports.add(new SettleClient.Report(entry.getKey(), share.limit, share.demand,
                        share.provisional ? 0 : share.tokens, returned, share.provisionalSpent,
                        Math.min(share.need, share.limit.capacity())));
                keys.add(entry.getKey());
                provisionalAtReport.add(wasProvisional);
                if (reactivation > 0) {
                    share.provisional = true;
                    share.tokens = reactivation;
                }
                share.demand = 0;
                share.need = 0;
                share.returned = 0;
                share.reportedProvisional = share.provisionalSpent;
            }
        }
        if (reports.isEmpty()) {
            lastSettledNanos = nanoClock.getAsLong();
            return Mono.just(0);
        }
        settling = true;
        return client.settle(reports)
                .timeout(interval.multipliedBy(5), Background.scheduler())
                .map(grants -> {
                    apply(keys, grants, provisionalAtReport, reports);
                    lastSettledNanos = nanoClock.getAsLong();
                    return grants.size();
                })
                .onErrorResume(failure -> {
                    // Timed out, or failed as a whole: the calls may have run in the store.
                    for (int i = 0; i < keys.size(); i++) {
                        restore(keys.get(i), reports.get(i), false);
                    }
                    logger.debug("Settle failed: {}", failure.toString());
                    return Mono.just(0);
                })
                .doFinally(signal -> settling = false);
    }

    private void apply(List<BucketKey> keys, List<SettleClient.Grant> grants, List<Boolean> provisionalAtReport,
            List<SettleClient.Report> reports) {
        for (int i = 0; i < keys.size(); i++) {
            Share share = shares.getIfPresent(keys.get(i));
            if (share == null) {
                continue;
            }
            SettleClient.Grant grant = grants.get(i);
            if (!grant.settled()) {
                restore(keys.get(i), reports.get(i), grant.outcome() == SettleClient.Outcome.NOT_SENT);
                continue;
            }
            synchronized (share) {
                share.provisionalSpent -= share.reportedProvisional;
                share.reportedProvisional = 0;
                // A provisional share that saw no traffic got no grant: it keeps its allowance until it is used.
                boolean used = reports.get(i).demand() > 0;
                double tokens = grant.grant();
                if (share.provisional && provisionalAtReport.get(i) && used) {
                    // The provisional allowance was never granted: drop what is left of it, keep only the grant.
                    // What was spent from it while this settle was in flight is paid from the grant first (the
                    // store sized the grant without it); what the grant does not cover is charged next settle.
                    double covered = Math.min(tokens, share.provisionalSpent);
                    tokens -= covered;
                    share.provisionalSpent -= covered;
                    share.provisional = false;
                    share.tokens = 0;
                }
                share.tokens += tokens;
                long giveBack = Math.min(grant.giveBack(), (long) Math.floor(share.tokens));
                share.tokens -= giveBack;
                share.returned += giveBack;
                share.storeRemaining = grant.storeRemaining();
            }
        }
    }

    /**
     * Puts back what a report that the store did not settle took from its share: the demand always (it only weighs
     * the fair part), the tokens given back only when the report was never sent. A report that may have run in the
     * store has added them to its pool already; handing them back again would let up to a capacity more through.
     * Dropped, they are missing only until the pool refills into them (its cap counts only the shares held).
     * Provisional spend is not marked paid, so it is charged again at the next settle: at worst twice, never not at all.
     */
    private void restore(BucketKey key, SettleClient.Report report, boolean neverSent) {
        Share share = shares.getIfPresent(key);
        if (share == null) {
            return;
        }
        synchronized (share) {
            share.demand += report.demand();
            share.need = Math.max(share.need, report.need());
            if (neverSent) {
                share.returned += report.returned();
            }
        }
    }

    /** Buckets this instance holds a share of (approximate while evictions are pending). */
    public long size() {
        shares.cleanUp();
        return shares.estimatedSize();
    }

    /** This instance's share of one bucket. Guarded by its own monitor. */
    static final class Share {

        TokenBucketLimit limit;
        double tokens;
        long demand;
        long need;
        double returned;
        boolean provisional = true;
        double provisionalSpent;
        double reportedProvisional;
        long storeRemaining;
        long lastUsedNanos;

        Share(TokenBucketLimit limit, int liveInstances, int cost) {
            this.limit = limit;
            // at least one request's worth (when the bucket holds one), so that a first request can pass here
            this.tokens = Math.max(Math.min(Math.max(1, cost), limit.capacity()),
                    Math.floor((double) limit.capacity() / liveInstances));
        }
    }
}

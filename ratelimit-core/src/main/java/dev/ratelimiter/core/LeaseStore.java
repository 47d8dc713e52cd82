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
 * Local mode: each instance decides from its own share of every bucket and settles with the store by need, at most
 * once per interval, in one call for all the keys that need it ({@link #settle()}). No store call is made on the
 * request path, so store calls per instance are bounded by the settle rate whatever the traffic, refusals included.
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
 * <p>Settling by need, not by clock: a key other instances use too is settled at every interval while it is in use
 * (its shares are sized by everybody's demand), and so is a key whose client is near its limit. A key the store finds
 * this instance alone on, whose client would spend at most half the bucket in a silence, is granted at most half the
 * bucket and may then go unsettled for up to a silence ({@code ratelimit.store.settle-max-silence}) while its share
 * lasts {@value LeaseShare#TICKS_AHEAD} intervals at its rate; the store keeps the rest in its pool and counts the
 * instance alive for the silence. It settles early when its share runs low, a request is refused, its client pauses
 * for {@value LeaseShare#IDLE_GAPS} of its usual gaps (it may have moved: its share goes back to the pool), or it owes
 * the store anything. It does not learn that another instance started using the key before its next settle (at most a
 * silence away); that instance finds at least half the bucket in the pool meanwhile. An idle key costs no store work;
 * a busy key far from its limit costs one bucket-settle per silence instead of one per interval. A dead silent
 * instance's share (at most half the bucket) comes back a silence later than it would.
 *
 * <p>When settling has failed for three intervals, decisions fall to {@link WithoutStore} (each rule's failure mode).
 * The bookkeeping of one bucket's share (spending, reporting, applying a grant) is {@link LeaseShare}'s.
 */
public final class LeaseStore {

    private static final Logger logger = LoggerFactory.getLogger(LeaseStore.class);

    private final SettleClient client;
    private final WithoutStore withoutStore;
    private final LiveInstances instances;
    private final Duration interval;
    private final Duration silence;
    private final LongSupplier nanoClock;
    private final Cache<BucketKey, LeaseShare> shares;
    private volatile long lastSettledNanos;
    private volatile boolean settling;

    /** A lease store that settles every share in use at every interval (no silence). */
    public LeaseStore(SettleClient client, WithoutStore withoutStore, LiveInstances instances, Duration interval,
            long maxKeys, LongSupplier nanoClock) {
        this(client, withoutStore, instances, interval, Duration.ZERO, maxKeys, nanoClock);
    }

    /**
     * @param silence the longest a share this instance alone uses may go without settling while it lasts; at most
     * {@code interval} (or zero) settles every share in use at every interval
     */
    public LeaseStore(SettleClient client, WithoutStore withoutStore, LiveInstances instances, Duration interval,
            Duration silence, long maxKeys, LongSupplier nanoClock) {
        this.client = client;
        this.withoutStore = withoutStore;
        this.instances = instances;
        this.interval = interval;
        this.silence = silence.compareTo(interval) <= 0 ? Duration.ZERO : silence;
        this.nanoClock = nanoClock;
        this.lastSettledNanos = nanoClock.getAsLong();
        // Idle shares are given back at the settle after their last use (or their silence); an entry is only dropped
        // long after that.
        Duration idleEntry = interval.multipliedBy(100).compareTo(this.silence.multipliedBy(5)) >= 0
                ? interval.multipliedBy(100) : this.silence.multipliedBy(5);
        this.shares = Caffeine.newBuilder().maximumSize(maxKeys).expireAfterAccess(idleEntry)
                .ticker(nanoClock::getAsLong).build();
    }

    /** Decides local-mode checks from this instance's shares, all or nothing. Never waits on the store. */
    public Verdict decide(List<Check> checks) {
        long now = nanoClock.getAsLong();
        if (now - lastSettledNanos > interval.toNanos() * 3) {
            return withoutStore.decide(checks, FallbackReason.STALE_SHARES);
        }
        if (checks.size() == 1) {
            // The common request (one rule applies): one monitor, nothing to order, one outcome.
            Check check = checks.get(0);
            LeaseShare share = share(check);
            synchronized (share) {
                share.spend(check.cost(), now, interval, instances);
                boolean enforcedDenial = share.refuses(check);
                return Verdict.evaluated(List.of(share.outcome(check, enforcedDenial, interval)),
                        Verdict.Source.LOCAL);
            }
        }
        List<LeaseShare> held = new ArrayList<>(checks.size());
        for (Check check : checks) {
            held.add(share(check));
        }
        return Verdict.evaluated(OrderedLocks.holding(checks, held, () -> decide(checks, held, now)),
                Verdict.Source.LOCAL);
    }

    private LeaseShare share(Check check) {
        // Looked up first without the loader: a capturing lambda per decision is an allocation on the hot path.
        LeaseShare share = shares.getIfPresent(check.bucket());
        return share != null ? share : shares.get(check.bucket(), k -> new LeaseShare((TokenBucketLimit) check
                .rule().limit(), Math.max(1, instances.count()), check.cost()));
    }

    /** Called holding every share's monitor. */
    private List<RuleOutcome> decide(List<Check> checks, List<LeaseShare> held, long now) {
        boolean enforcedDenial = false;
        for (int i = 0; i < checks.size(); i++) {
            Check check = checks.get(i);
            LeaseShare share = held.get(i);
            share.spend(check.cost(), now, interval, instances);
            enforcedDenial |= share.refuses(check);
        }
        List<RuleOutcome> outcomes = new ArrayList<>(checks.size());
        for (int i = 0; i < checks.size(); i++) {
            outcomes.add(held.get(i).outcome(checks.get(i), enforcedDenial, interval));
        }
        return outcomes;
    }

    /** Gives back a spend the exact store refused to go with (the request was denied after all). */
    public void refund(List<Check> checks) {
        for (Check check : checks) {
            LeaseShare share = shares.getIfPresent(check.bucket());
            if (share != null) {
                share.refund(check.cost());
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
        List<LeaseShare.Reported> reported = new ArrayList<>();
        long now = nanoClock.getAsLong();
        for (Map.Entry<BucketKey, LeaseShare> entry : shares.asMap().entrySet()) {
            LeaseShare.Reported report = entry.getValue().report(entry.getKey(), instances, now, interval, silence);
            if (report != null) {
                keys.add(entry.getKey());
                reported.add(report);
            }
        }
        if (reported.isEmpty()) {
            lastSettledNanos = nanoClock.getAsLong();
            return Mono.just(0);
        }
        settling = true;
        return client.settle(reported.stream().map(LeaseShare.Reported::report).toList())
                .timeout(interval.multipliedBy(5), Background.scheduler())
                .map(grants -> {
                    apply(keys, grants, reported);
                    lastSettledNanos = nanoClock.getAsLong();
                    return grants.size();
                })
                .onErrorResume(failure -> {
                    // Timed out, or failed as a whole: the calls may have run in the store.
                    for (int i = 0; i < keys.size(); i++) {
                        restore(keys.get(i), reported.get(i), false);
                    }
                    logger.debug("Settle failed: {}", failure.toString());
                    return Mono.just(0);
                })
                .doFinally(signal -> settling = false);
    }

    private void apply(List<BucketKey> keys, List<SettleClient.Grant> grants, List<LeaseShare.Reported> reported) {
        for (int i = 0; i < keys.size(); i++) {
            SettleClient.Grant grant = grants.get(i);
            if (!grant.settled()) {
                restore(keys.get(i), reported.get(i), grant.outcome() == SettleClient.Outcome.NOT_SENT);
                continue;
            }
            LeaseShare share = shares.getIfPresent(keys.get(i));
            if (share != null) {
                share.apply(grant, reported.get(i));
            }
        }
    }

    /** See {@link LeaseShare#restore}: a report the store did not settle is put back. */
    private void restore(BucketKey key, LeaseShare.Reported reported, boolean neverSent) {
        LeaseShare share = shares.getIfPresent(key);
        if (share != null) {
            share.restore(reported.report(), neverSent);
        }
    }

    /** Buckets this instance holds a share of (approximate while evictions are pending). */
    public long size() {
        shares.cleanUp();
        return shares.estimatedSize();
    }
}

package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;

/**
 * Decides checks when the shared store cannot: each rule by its failure mode. {@link FailureMode#LOCAL} rules from
 * this instance's own buckets holding its share of the limit (limit ÷ live instances × the share factor, never more
 * than the limit), {@link FailureMode#OPEN} rules allow, and an enforced {@link FailureMode#CLOSED} rule refuses the
 * request (a 503, see {@link Verdict#unavailable}).
 *
 * <p>The local buckets never start afresh when the store stops answering: each {@linkplain #follow follows} what the
 * store last reported for its key (its share of the tokens left), so a switch to the fallback grants no new burst. What
 * they spend on their own beyond what the store refilled meanwhile is {@linkplain #drainOwed owed} to the store and
 * charged to it when it answers again, so that a store flapping between answering and not cannot add the fallback's
 * admissions on top of its own: over any period, the store's bucket counts what the fallback admitted.
 */
public final class WithoutStore {

    /**
     * The shortest Retry-After of a request refused by a closed rule while the store is gone: the header is whole
     * seconds, and a client told to come back at once would only hammer a store that cannot answer.
     */
    public static final Duration SHORTEST_RETRY_AFTER = Duration.ofSeconds(1);

    /**
     * Each instance's share of a limit in the fallback: limit ÷ live instances × this. 1 (the default, the seeds' ÷ N)
     * gives the whole fleet exactly the limit when a client's requests are spread evenly, and less when they are not (a
     * client on one keep-alive connection reaches one instance); 2 lets such a client have up to twice its share of one
     * instance, and an evenly spread client up to twice the limit while the store is gone. Measured with two instances
     * and a client at 10 × its limit (issue 30): 1 admitted 118 of 120 through a 2 s outage and 126 through 20 flaps,
     * 2 admitted 126 and 163; a client at 0.8 × its limit reaching one instance got 70 of 80 through a 6 s outage with
     * 1, all of them with 2.
     */
    public static final double DEFAULT_SHARE_FACTOR = 1.0;

    /** Buckets remembered as owing the store at most: beyond, a bucket's spend is found when the store reports it. */
    private static final int MAX_OWING = 100_000;

    private final LocalBucketStore buckets;
    private final LiveInstances instances;
    private final StoreMetrics metrics;
    private final Supplier<Duration> closedRetryAfter;
    private final double shareFactor;
    private final boolean chargedBack;
    private final StoreReports reports = new StoreReports();
    private final Map<String, Rule[]> fairShares = new ConcurrentHashMap<>();
    private final Map<BucketKey, Owing> spentAlone = new ConcurrentHashMap<>();
    private final Queue<FallbackCharges.Charge> settled = new ConcurrentLinkedQueue<>();
    private volatile int sharesSizedFor;

    /**
     * @param buckets this instance's own buckets, for {@link FailureMode#LOCAL} rules
     * @param instances how many instances share the limits (each holds its share)
     * @param metrics told of every decision made here
     * @param closedRetryAfter the Retry-After of a request a closed rule refuses
     * @param shareFactor each instance's share is limit ÷ live instances × this (see {@link #DEFAULT_SHARE_FACTOR})
     * @param chargedBack whether what it admits is {@linkplain #drainOwed owed} to the store (exact mode's fallback,
     * whose store is asked for every decision); false keeps no account of it
     */
    public WithoutStore(LocalBucketStore buckets, LiveInstances instances, StoreMetrics metrics,
            Supplier<Duration> closedRetryAfter, double shareFactor, boolean chargedBack) {
        if (!(shareFactor >= 1)) {
            throw new IllegalArgumentException("the fallback share factor must be at least 1, but was " + shareFactor);
        }
        this.buckets = buckets;
        this.instances = instances;
        this.metrics = metrics;
        this.closedRetryAfter = closedRetryAfter;
        this.shareFactor = shareFactor;
        this.chargedBack = chargedBack;
    }

    /** Charged back, with this share factor. */
    public WithoutStore(LocalBucketStore buckets, LiveInstances instances, StoreMetrics metrics,
            Supplier<Duration> closedRetryAfter, double shareFactor) {
        this(buckets, instances, metrics, closedRetryAfter, shareFactor, true);
    }

    /** Charged back, with the {@linkplain #DEFAULT_SHARE_FACTOR default share}. */
    public WithoutStore(LocalBucketStore buckets, LiveInstances instances, StoreMetrics metrics,
            Supplier<Duration> closedRetryAfter) {
        this(buckets, instances, metrics, closedRetryAfter, DEFAULT_SHARE_FACTOR, true);
    }

    /**
     * Retry after the breaker's wait in its open state — when it lets a trial call through to the store again — and
     * never sooner than {@link #SHORTEST_RETRY_AFTER}.
     */
    public static Supplier<Duration> untilBreakerRetries(StoreBreaker breaker) {
        return () -> {
            Duration wait = breaker.settings().waitInOpenState();
            return wait.compareTo(SHORTEST_RETRY_AFTER) < 0 ? SHORTEST_RETRY_AFTER : wait;
        };
    }

    /** {@link #decide(List, FallbackReason)} for a store that answered nothing in time. */
    public Verdict decide(List<Check> checks) {
        return decide(checks, FallbackReason.TIMEOUT);
    }

    public Verdict decide(List<Check> checks, FallbackReason reason) {
        List<RuleOutcome> refused = new ArrayList<>();
        for (Check check : checks) {
            if (check.rule().failureMode() == FailureMode.CLOSED && !check.shadow()) {
                refused.add(new RuleOutcome(check, false, 0, closedRetryAfter.get(), Duration.ZERO));
            }
        }
        if (!refused.isEmpty()) {
            refused.forEach(outcome -> metrics.fallbackDecision(FailureMode.CLOSED, reason));
            return Verdict.unavailable(refused, reason);
        }
        List<Check> local = new ArrayList<>();
        for (Check check : checks) {
            if (check.rule().failureMode() == FailureMode.LOCAL) {
                Rule share = fairShare(check.rule(), check.cost());
                Check own = share == check.rule() ? check : check.withRule(share);
                StoreReports.Report last = chargedBack && !check.concurrency() ? reports.get(check.bucket()) : null;
                if (last != null) {
                    buckets.startFrom(own, last.remaining(), part(share, check.rule()), last.atNanos());
                }
                local.add(own);
            }
        }
        Verdict localVerdict = local.isEmpty() ? null : buckets.evaluateNow(local);
        List<RuleOutcome> outcomes = new ArrayList<>(checks.size());
        int next = 0;
        for (Check check : checks) {
            FailureMode mode = check.rule().failureMode();
            metrics.fallbackDecision(mode == FailureMode.CLOSED ? FailureMode.OPEN : mode, reason);
            if (mode == FailureMode.LOCAL) {
                RuleOutcome outcome = localVerdict.outcomes().get(next++);
                if (chargedBack && localVerdict.allowed() && outcome.allowed() && !check.concurrency()
                        && spentAlone.size() < MAX_OWING) {
                    spentAlone.putIfAbsent(check.bucket(), new Owing(check, outcome.check()));
                }
                // The rule as the client knows it (its limit in the headers, the events), this instance's share's
                // remaining and waits: the share is how the fallback decides, not a different policy.
                outcomes.add(outcome.check() == check ? outcome : new RuleOutcome(check, outcome.allowed(),
                        outcome.remaining(), outcome.retryAfter(), outcome.resetAfter()));
            }
            else {
                // Open (or a closed rule in shadow): allowed, and the bucket is reported whole since nothing counted it.
                outcomes.add(new RuleOutcome(check, true, check.rule().limit().quota(), Duration.ZERO, Duration.ZERO));
            }
        }
        return Verdict.fallback(outcomes, reason);
    }

    /**
     * Continues this instance's buckets from what the store answered: each {@link FailureMode#LOCAL} rate check's
     * bucket holds its share of what the store says is left (a bucket not held yet is only remembered, and made from
     * it if the fallback comes to need it). What a bucket spent on its own until then is kept to be
     * {@linkplain #drainOwed charged}; returns whether there is any.
     */
    public boolean follow(Verdict verdict) {
        if (!chargedBack || verdict.source() != Verdict.Source.STORE) {
            return false;
        }
        boolean owes = false;
        for (RuleOutcome outcome : verdict.outcomes()) {
            Check check = outcome.check();
            Rule rule = check.rule();
            if (rule.failureMode() != FailureMode.LOCAL || check.concurrency()) {
                continue;
            }
            Rule share = fairShare(rule, check.cost());
            BucketState.Owed owed = buckets.follow(share == rule ? check : check.withRule(share), outcome.remaining(),
                    part(share, rule));
            if (owed == null) {
                reports.put(check.bucket(), outcome.remaining(), buckets.now());
            }
            else if (owed.total() > 0) {
                settled.add(new FallbackCharges.Charge(check, owed.current(), owed.previous()));
                owes = true;
            }
        }
        return owes;
    }

    /**
     * Amounts the store could not be charged (a response's reported amount while it is down): spent from this
     * instance's share of each {@link FailureMode#LOCAL} rule's bucket, which its fallback decides by, and owed to the
     * store with what the bucket spent on its own. Other rules are not counted here when the store cannot answer.
     */
    public void debit(List<FallbackCharges.Charge> charges) {
        for (FallbackCharges.Charge charge : charges) {
            Check check = charge.check();
            Rule rule = check.rule();
            if (rule.failureMode() != FailureMode.LOCAL || check.concurrency()) {
                continue;
            }
            Rule share = fairShare(rule, check.cost());
            Check own = share == rule ? check : check.withRule(share);
            StoreReports.Report last = chargedBack ? reports.get(check.bucket()) : null;
            if (last != null) {
                // a bucket not held yet starts where the store left it, as one the fallback decides by does
                buckets.startFrom(own, last.remaining(), part(share, rule), last.atNanos());
            }
            buckets.debit(own, charge.total());
            if (chargedBack && spentAlone.size() < MAX_OWING) {
                spentAlone.putIfAbsent(check.bucket(), new Owing(check, own));
            }
        }
    }

    /** The part of {@code rule}'s limit this instance's {@code share} holds. */
    private static double part(Rule share, Rule rule) {
        return share == rule ? 1.0 : (double) share.limit().quota() / rule.limit().quota();
    }

    /**
     * What this instance's buckets spent on their own since they last followed the store, beyond what the store
     * refilled meanwhile: one charge per bucket, each counted once (the buckets count afresh from here).
     */
    public List<FallbackCharges.Charge> drainOwed() {
        List<FallbackCharges.Charge> charges = new ArrayList<>();
        for (FallbackCharges.Charge charge = settled.poll(); charge != null; charge = settled.poll()) {
            charges.add(charge);
        }
        for (Iterator<Owing> owing = spentAlone.values().iterator(); owing.hasNext();) {
            Owing bucket = owing.next();
            owing.remove();
            BucketState.Owed owed = buckets.settleOwed(bucket.share);
            if (owed.total() > 0) {
                charges.add(new FallbackCharges.Charge(bucket.check, owed.current(), owed.previous()));
            }
        }
        return charges;
    }

    /**
     * The store applied these charges (or may have: they are not sent again): the buckets stop taking them off the
     * store's reports.
     */
    public void charged(List<FallbackCharges.Charge> charges) {
        for (FallbackCharges.Charge charge : charges) {
            buckets.charged(charge.check().bucket(), charge.total());
        }
    }

    public int liveInstances() {
        return Math.max(1, instances.count());
    }

    /**
     * The rule with its limit cut to this instance's share, cached until the instance count changes — but never below
     * the request's cost: a share too small for one request would refuse every such request on every instance, so it
     * holds one request's worth instead.
     */
    private Rule fairShare(Rule rule, int cost) {
        int count = liveInstances();
        if (count != sharesSizedFor) {
            fairShares.clear();
            sharesSizedFor = count;
        }
        double factor = Math.min(1.0, shareFactor / count);
        if (factor >= 1.0) {
            return rule;
        }
        // Keyed by id and checked by identity: hashing a rule with thousands of customer keys per request would cost.
        Rule[] cached = fairShares.get(rule.id());
        if (cached == null || cached[0] != rule) {
            cached = new Rule[] { rule, rule.withLimit(rule.limit().scaled(factor)) };
            fairShares.put(rule.id(), cached);
        }
        if (cost > cached[1].limit().quota() && cost <= rule.limit().quota()) {
            return rule.withLimit(rule.limit().scaled((double) cost / rule.limit().quota()));
        }
        return cached[1];
    }

    /** A bucket that spent on its own: the check as the request had it, and as this instance's share of it. */
    private record Owing(Check check, Check share) {
    }
}

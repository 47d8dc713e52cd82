package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * What this instance admitted and refused under each global rule's buckets since the last {@link #drain}, in tokens:
 * the usage the rebalancer moves shares by. Counted on the request path (a map look-up and an add per global rule),
 * published per interval, so what crosses regions is one record per active bucket and instance and interval, never
 * one per request.
 */
public final class RegionUsage implements VerdictListener {

    /** One bucket's usage over one interval. */
    /**
     * @param quiet the bucket is on its default share, refusing nothing, using under half of it: it will not be
     * reported again while it stays so, and its usage stands until then
     */
    public record Report(String key, String rule, long quota, long windowMillis, long share, long admitted,
            long refused, boolean quiet) {
    }

    /** A quiet bucket is reported every this many intervals, not at every one. */
    static final int QUIET_RESEND = 6;

    private final Supplier<RuleSet> rules;
    private final RegionShares shares;
    private final IntSupplier instances;
    private final int maxKeys;
    private final Map<String, Counts> counts = new ConcurrentHashMap<>();
    private final AtomicLong overflow = new AtomicLong();

    /**
     * @param rules the rules in force, whose whole limits the reports carry (a request sees its region's share)
     * @param shares this region's shares: a quiet bucket on its default share is not reported
     * @param maxKeys buckets counted at once; a bucket beyond them is not counted (and keeps the default split)
     */
    public RegionUsage(Supplier<RuleSet> rules, RegionShares shares, int maxKeys) {
        this(rules, shares, () -> 1, maxKeys);
    }

    /** @param instances this region's live instances, which share its share of a bucket */
    public RegionUsage(Supplier<RuleSet> rules, RegionShares shares, IntSupplier instances, int maxKeys) {
        this.rules = rules;
        this.shares = shares;
        this.instances = instances;
        this.maxKeys = maxKeys;
    }

    @Override
    public void onVerdict(RequestAttributes request, Verdict verdict) {
        List<RuleOutcome> outcomes = verdict.outcomes();
        for (int i = 0; i < outcomes.size(); i++) {
            RuleOutcome outcome = outcomes.get(i);
            if (outcome.rule().scope() != Scope.GLOBAL) {
                continue;
            }
            // Tokens are spent only when the whole request passes (all or nothing): a request refused by another rule
            // took nothing from this one and asked nothing of it that a larger share would have given.
            boolean admitted = outcome.allowed() && verdict.allowed();
            if (outcome.allowed() && !admitted) {
                continue;
            }
            Counts bucket = countsOf(outcome);
            if (bucket != null) {
                (admitted ? bucket.admitted : bucket.refused).add(outcome.check().cost());
                bucket.share = outcome.rule().limit().quota();
            }
        }
    }

    private Counts countsOf(RuleOutcome outcome) {
        String key = RegionShares.shareKey(outcome.check().bucket());
        Counts bucket = counts.get(key);
        if (bucket != null) {
            return bucket;
        }
        if (counts.size() >= maxKeys) {
            overflow.incrementAndGet();
            return null;
        }
        return counts.computeIfAbsent(key, k -> new Counts(outcome.rule().id()));
    }

    /**
     * The usage of the last {@code intervalMillis} (since the last drain), and the counters reset. A bucket idle for a
     * whole interval is reported once with zeros (so the rebalancer learns its traffic here stopped) and then
     * forgotten. A quiet bucket — on its default share, refusing nothing, using less than half of it — is not
     * reported either (after one report saying so): most buckets of a global rule never need quota moved, and
     * their reports would be most of the traffic between regions.
     */
    public List<Report> drain(long intervalMillis) {
        RuleSet ruleSet = rules.get();
        List<Report> reports = new ArrayList<>();
        counts.forEach((key, bucket) -> {
            long admitted = bucket.admitted.sumThenReset();
            long refused = bucket.refused.sumThenReset();
            Rule rule = ruleSet.rules().get(bucket.rule);
            if (rule == null || rule.scope() != Scope.GLOBAL || admitted + refused == 0 && bucket.idle) {
                counts.remove(key, bucket); // an add racing this removal is lost: one interval's count of one bucket
                return;
            }
            boolean idle = admitted + refused == 0;
            bucket.idle = idle;
            long quota = rule.limit().quota();
            long windowMillis = rule.limit().window().toMillis();
            // Judged against this instance's part of the region's share: several instances of a region that
            // together use most of it are not quiet each.
            double part = (double) bucket.share / Math.max(1, instances.getAsInt());
            boolean quiet = !idle && refused == 0 && bucket.share == shares.defaultShare(quota)
                    && admitted * 2.0 * windowMillis < part * intervalMillis;
            // A quiet bucket says so again every few intervals, so the rebalancer never takes its silence for loss.
            if (quiet && bucket.quiet && ++bucket.quietIntervals % QUIET_RESEND != 0) {
                return;
            }
            bucket.quiet = quiet;
            reports.add(new Report(key, bucket.rule, quota, windowMillis, bucket.share, admitted, refused, quiet));
        });
        return reports;
    }

    /**
     * A report of zeros for every bucket counted, all forgotten: what an instance leaving says last, so the rebalancer
     * does not take its silence for lost contact.
     */
    public List<Report> farewell() {
        RuleSet ruleSet = rules.get();
        List<Report> reports = new ArrayList<>();
        counts.forEach((key, bucket) -> {
            Rule rule = ruleSet.rules().get(bucket.rule);
            if (rule != null) {
                reports.add(new Report(key, bucket.rule, rule.limit().quota(), rule.limit().window().toMillis(),
                        bucket.share, 0, 0, false));
            }
        });
        counts.clear();
        return reports;
    }

    /** Buckets counted now. */
    public int keys() {
        return counts.size();
    }

    /** Verdicts of buckets that found the count full ({@code maxKeys}) and were not counted. */
    public long overflow() {
        return overflow.get();
    }

    private static final class Counts {

        final String rule;
        final LongAdder admitted = new LongAdder();
        final LongAdder refused = new LongAdder();
        volatile long share;
        /** Reported with zeros at the last drain: forgotten at the next one unless used meanwhile. */
        boolean idle;
        /** Reported as quiet at the last drain: not reported again while it stays so (but every few intervals). */
        boolean quiet;
        int quietIntervals;

        Counts(String rule) {
            this.rule = rule;
        }
    }
}

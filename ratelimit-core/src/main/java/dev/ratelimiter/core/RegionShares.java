package dev.ratelimiter.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * This region's share of each global rule's buckets. A {@link Scope#GLOBAL global} rule's limit is split between
 * the regions: by default in proportion to their weights (1,000 over three equal regions: 334, 333, 333, the larger
 * remainder to the region first by name), and, for keys the rebalancer has moved quota for, by the shares it last
 * published. Every region computes the same default split from the same settings, so shares sum to the limit
 * whether or not a region has heard from the rebalancer.
 *
 * <p>A published share counts only while its limit is the rule's limit: a rule whose limit changed is back on the
 * default split of the new limit until the rebalancer publishes shares of it.
 *
 * <p>Moved buckets are bounded: at most {@code maxMoved} whose record a rule in force here can use, and a tenth of that
 * (at least one) of records waiting for their rule or limit to arrive here. Past either bound the bucket whose record
 * was applied longest ago in that class goes back to the default split; nothing else does.
 */
public final class RegionShares {

    /** The number of moved buckets kept when none is given. */
    public static final int DEFAULT_MAX_MOVED = 100_000;

    /** What {@link #shareKey} makes: a client id, '/', a rule id, '@', its limit's shape, perhaps ':' and an id. */
    private static final Pattern SHARE_KEY = Pattern.compile(
            "[A-Za-z0-9_-]{22}/([A-Za-z0-9][A-Za-z0-9._-]{0,127}@[A-Za-z0-9]{1,24})(?::[A-Za-z0-9_-]{22})?");

    private final String region;
    private final List<String> regions;
    private final double[] weights;
    private final int self;
    private final Map<String, Share> shares = new ConcurrentHashMap<>();
    /** Keys of {@link #shares} in the order their records were applied, oldest first; guarded by {@code this}. */
    private final LinkedHashSet<String> usableOrder = new LinkedHashSet<>();
    private final LinkedHashSet<String> waitingOrder = new LinkedHashSet<>();
    private final int maxUsable;
    private final int maxWaiting;
    private volatile long evicted;
    /** The default split's rule for each global rule. */
    private final Map<String, Held> defaults = new ConcurrentHashMap<>();
    /** Likewise, the floor each global rule's buckets hold until the shares topic is read. */
    private final Map<String, Held> startup = new ConcurrentHashMap<>();
    private final ToLongFunction<Rule> defaultShareOf = rule -> defaultShare(rule.limit().quota());
    /** The start-up floor's share, made once: a capturing lambda per check would allocate on the request path. */
    private final ToLongFunction<Rule> startupShareOf = this::startupShare;
    private volatile Instant lastHeard;
    private volatile long updates;
    /** Part of a limit a bucket holds while the shares topic has not been read to its end (see {@link #awaitShares}). */
    private volatile double startupFloor = -1;

    /**
     * @param region this instance's region
     * @param weights every region (this one included) and its weight in the default split
     */
    public RegionShares(String region, Map<String, Double> weights) {
        this(region, weights, DEFAULT_MAX_MOVED);
    }

    /**
     * @param maxMoved moved buckets kept whose record a rule in force can use (a tenth of it more for records
     * waiting for their rule)
     */
    public RegionShares(String region, Map<String, Double> weights, int maxMoved) {
        if (maxMoved < 1) {
            throw new InvalidLimitException("ratelimit.regions.max-keys", "ratelimit.regions.max-keys must be at "
                    + "least 1, but was " + maxMoved + ".");
        }
        this.maxUsable = maxMoved;
        this.maxWaiting = Math.max(1, maxMoved / 10);
        Map<String, Double> sorted = new TreeMap<>(weights);
        if (!sorted.containsKey(region)) {
            throw new InvalidLimitException("ratelimit.regions.weights", "ratelimit.regions.weights lists "
                    + sorted.keySet() + " but not this instance's region '" + region + "' (ratelimit.regions.local).");
        }
        sorted.forEach((name, weight) -> {
            PolicyNames.requireValid("ratelimit.regions.weights", name);
            if (weight == null || !(weight > 0) || weight.isInfinite()) {
                throw new InvalidLimitException("ratelimit.regions.weights", "ratelimit.regions.weights." + name
                        + " must be a number above 0 (its part of the default split), but was " + weight + ".");
            }
        });
        this.region = region;
        this.regions = List.copyOf(sorted.keySet());
        this.weights = sorted.values().stream().mapToDouble(Double::doubleValue).toArray();
        this.self = regions.indexOf(region);
    }

    /**
     * The regions and weights as text ({@code ap-southeast-1=1.0,eu-central-1=1.0,us-east-1=1.0}), carried by every
     * record between the regions and the rebalancer: a record made under other settings is refused, since its
     * shares and this region's default split would not sum to the limit together.
     */
    public String fingerprint() {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < regions.size(); i++) {
            text.append(i == 0 ? "" : ",").append(regions.get(i)).append('=').append(weights[i]);
        }
        return text.toString();
    }

    /**
     * Until {@link #sharesRead} is called, buckets without a share hold only {@code floor} of their limit (at least 1),
     * not their default split: an instance just started does not yet know which buckets the rebalancer moved quota
     * away from this region, and the default split beside the other regions' grown shares could exceed the limit.
     * The floor is the least any region is ever given (the rebalancer's {@code FLOOR}).
     */
    public void awaitShares(double floor) {
        if (!(floor >= 0) || floor * regions.size() > 1) {
            throw new InvalidLimitException("ratelimit.regions.floor", "ratelimit.regions.floor must be between 0 and "
                    + "1 / regions (" + 1.0 / regions.size() + "), the rebalancer's FLOOR, but was " + floor + ".");
        }
        startupFloor = floor;
    }

    /** The shares topic has been read to its end (or given up on): buckets without a share take the default split. */
    public void sharesRead() {
        startupFloor = -1;
    }

    /** Whether buckets are still held to the floor until the shares topic is read. */
    public boolean awaitingShares() {
        return startupFloor >= 0;
    }

    /** One region holding every limit whole: what an instance without region settings is. */
    public static RegionShares single(String region) {
        return new RegionShares(region, Map.of(region, 1.0));
    }

    public String region() {
        return region;
    }

    /** Every region, sorted by name: the order of {@link #defaultSplit} and of the rebalancer's vectors. */
    public List<String> regions() {
        return regions;
    }

    /** {@code quota} split between the regions by weight. */
    public long[] defaultSplit(long quota) {
        return QuotaSplit.byWeight(quota, weights);
    }

    /** This region's part of the default split of {@code quota}. */
    public long defaultShare(long quota) {
        return defaultSplit(quota)[self];
    }

    /**
     * Refuses a global rule these regions cannot split: each region needs at least one of its quota, or its bucket
     * would be raised to 1 and the regions together would allow more than the limit.
     */
    public void requireSplittable(Rule rule) {
        if (rule.scope() == Scope.GLOBAL && regions.size() > 1 && rule.limit().quota() < regions.size()) {
            throw new InvalidLimitException("ratelimit.rules." + rule.id() + ".scope", "rule '" + rule.id()
                    + "' is global over " + regions.size()
                    + " regions, but its quota " + rule.limit().quota() + " cannot give each region 1 of it; raise "
                    + "the limit to at least " + regions.size() + " or use scope regional.");
        }
    }

    /** The name a bucket's share is published under: its store partition and name, both already hashed or valid. */
    public static String shareKey(BucketKey bucket) {
        return bucket.partition() + "/" + bucket.name();
    }

    /**
     * The rule a share key's bucket belongs to and its limit's shape ({@code free.default@t}), or null when the key is
     * nothing {@link #shareKey} makes.
     */
    public static String ruleShapeOf(String key) {
        Matcher matcher = SHARE_KEY.matcher(key);
        return matcher.matches() ? matcher.group(1) : null;
    }

    /**
     * The rule a request is checked against in this region: {@code rule} itself unless it is global, else {@code rule}
     * holding this region's share of its limit for {@code bucket}.
     */
    public Rule ruleFor(Rule rule, BucketKey bucket) {
        if (rule.scope() != Scope.GLOBAL || regions.size() == 1) {
            return rule;
        }
        Share share = shares.isEmpty() ? null : shares.get(shareKey(bucket));
        if (share != null && share.quota == rule.limit().quota()) {
            Held made = share.made;
            if (made == null || made.rule != rule) {
                made = new Held(rule, share.amount);
                share.made = made;
            }
            return made.share;
        }
        if (startupFloor >= 0) {
            return held(startup, rule, startupShareOf);
        }
        return held(defaults, rule, defaultShareOf);
    }

    private long startupShare(Rule rule) {
        long quota = rule.limit().quota();
        double floor = startupFloor;
        // Read again here: the floor may have been lifted since the caller looked; then the default split applies.
        return floor >= 0 ? Math.min(defaultShare(quota), (long) Math.floor(quota * floor)) : defaultShare(quota);
    }

    /** {@code rule} holding {@code amountOf(rule)} of its limit, from {@code made} unless {@code rule} is new there. */
    private static Rule held(Map<String, Held> made, Rule rule, ToLongFunction<Rule> amountOf) {
        Held held = made.get(rule.id());
        if (held == null || held.rule != rule) {
            held = new Held(rule, amountOf.applyAsLong(rule));
            made.put(rule.id(), held);
        }
        return held.share;
    }

    /** {@link #apply(String, long, Map, long, boolean)} of a record usable now, published at 0. */
    public void apply(String key, long quota, Map<String, Long> amounts) {
        apply(key, quota, amounts, 0, true);
    }

    /**
     * Applies shares the rebalancer published for one bucket at {@code at}: {@code amounts} by region, of a limit of
     * {@code quota}; {@code null} amounts (a tombstone) put the bucket back on the default split. A region missing
     * from the amounts keeps the default split too.
     *
     * @param usable whether a rule in force here makes the bucket, with that limit; otherwise the record waits (for a
     * rule or a limit change still on its way here) among the fewer records kept for that
     */
    public synchronized void apply(String key, long quota, Map<String, Long> amounts, long at,
            boolean usable) {
        Long amount = amounts == null ? null : amounts.get(region);
        usableOrder.remove(key);
        waitingOrder.remove(key);
        if (amount == null || amount < 1 || quota < 1) {
            shares.remove(key);
        }
        else {
            shares.put(key, new Share(quota, amount, at));
            keep(key, usable ? usableOrder : waitingOrder, usable ? maxUsable : maxWaiting);
        }
        updates++;
    }

    private void keep(String key, LinkedHashSet<String> order, int max) {
        order.add(key);
        if (order.size() > max) {
            Iterator<String> oldest = order.iterator();
            shares.remove(oldest.next());
            oldest.remove();
            evicted++;
        }
    }

    /** When the record in force for {@code key} was published, or {@link Long#MIN_VALUE} when none is. */
    public long publishedAt(String key) {
        Share share = shares.get(key);
        return share == null ? Long.MIN_VALUE : share.at;
    }

    /** The rebalancer was heard from at {@code when} (a share or its heartbeat). */
    public void heard(Instant when) {
        lastHeard = when;
    }

    /** When the rebalancer was last heard from, or null if never. */
    public Instant lastHeard() {
        return lastHeard;
    }

    /** Whether the shares may be out of date: nothing heard from the rebalancer for {@code staleAfter}. */
    public boolean stale(Instant now, Duration staleAfter) {
        Instant heard = lastHeard;
        return heard == null || heard.plus(staleAfter).isBefore(now);
    }

    /** Buckets holding a share other than the default split. */
    public int moved() {
        return shares.size();
    }

    /** Share updates applied since start. */
    public long updates() {
        return updates;
    }

    /** Moved buckets put back on the default split to keep the bound (see the class description). */
    public long evicted() {
        return evicted;
    }

    /** This region's share of each moved bucket, for the operator view (at most {@code max}). */
    public List<String> describe(int max) {
        List<String> described = new ArrayList<>();
        for (Map.Entry<String, Share> entry : shares.entrySet()) {
            if (described.size() >= max) {
                break;
            }
            described.add(entry.getKey() + "=" + entry.getValue().amount + "/" + entry.getValue().quota);
        }
        return described;
    }

    /**
     * A rule and the rule that holds a share of its limit, made once per rule object (rules are replaced, not
     * changed), so that a request finds it by identity instead of making it again.
     */
    private static final class Held {

        final Rule rule;
        final Rule share;

        Held(Rule rule, long amount) {
            this.rule = rule;
            this.share = rule.withLimit(rule.limit().share(amount));
        }
    }

    private static final class Share {

        final long quota;
        final long amount;
        /** When the rebalancer published it (its clock, epoch milliseconds). */
        final long at;
        volatile Held made;

        Share(long quota, long amount, long at) {
            this.quota = quota;
            this.amount = amount;
            this.at = at;
        }
    }
}

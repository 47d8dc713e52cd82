package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Decides one request: finds every rule that applies, checks them all in one store call, and returns the
 * verdict. Knows nothing of HTTP; the gateway filter adapts it.
 */
public final class RateLimitEvaluator {

    private final Supplier<RuleSet> rules;
    private final RateLimitStore store;
    private final ClientIds clientIds;
    private final RegionShares regions;
    private final AbuseScores abuse;
    private static final Logger logger = LoggerFactory.getLogger(RateLimitEvaluator.class);

    private final Map<String, Rule[]> shardRules = new ConcurrentHashMap<>();
    private final Set<String> neverPass = ConcurrentHashMap.newKeySet();
    private final Set<String> wholeGlobal = ConcurrentHashMap.newKeySet();
    private final AbuseScaling abuseScaling = new AbuseScaling();

    /**
     * @param clientIds the hash that names buckets (every part of a bucket key that comes from a request)
     */
    public RateLimitEvaluator(Supplier<RuleSet> rules, RateLimitStore store, ClientIds clientIds) {
        this(rules, store, clientIds, null);
    }

    /**
     * @param regions this region's shares of global rules; null: one region, every limit whole
     */
    public RateLimitEvaluator(Supplier<RuleSet> rules, RateLimitStore store, ClientIds clientIds,
            RegionShares regions) {
        this(rules, store, clientIds, regions, null);
    }

    /**
     * @param abuse the clients' abuse scores, which lower their limits; null: limits are as configured
     */
    public RateLimitEvaluator(Supplier<RuleSet> rules, RateLimitStore store, ClientIds clientIds,
            RegionShares regions, AbuseScores abuse) {
        this.rules = rules;
        this.store = store;
        this.clientIds = clientIds;
        this.regions = regions;
        this.abuse = abuse;
    }

    /** This instance's region when global rules are split between regions, else null. */
    public String region() {
        return regions == null || regions.regions().size() == 1 ? null : regions.region();
    }

    /** The rule set in force right now. */
    public RuleSet rules() {
        return rules.get();
    }

    /** {@link #check(RuleSet, RequestAttributes, RequestPermits)} against the rule set in force now. */
    public Mono<Verdict> check(RequestAttributes request, RequestPermits permits) {
        return check(rules.get(), request, permits);
    }

    /**
     * Checks one request against {@code ruleSet}, the one its tier was resolved in ({@link RuleSet#tierFor}): a
     * caller reads the rule set once per request, so that a change swapped in meanwhile cannot pair one set's tier
     * with another's rules. Concurrency permits the stores grant are recorded in {@code permits}, which the caller
     * must {@link RequestPermits#end() end} when the request is over, however it ends.
     */
    public Mono<Verdict> check(RuleSet ruleSet, RequestAttributes request, RequestPermits permits) {
        return check(ruleSet, request, permits, RuleCosts.STANDARD);
    }

    /**
     * As {@link #check(RuleSet, RequestAttributes, RequestPermits)}, each rule's cost as {@code costs} says (a cost
     * the request decides, {@link Metering}).
     */
    public Mono<Verdict> check(RuleSet ruleSet, RequestAttributes request, RequestPermits permits, RuleCosts costs) {
        if (ruleSet.killSwitch()) {
            return Mono.just(Verdict.unlimited(Verdict.Reason.KILL_SWITCH));
        }
        List<Rule> applicable = ruleSet.applicableTo(request);
        if (applicable.isEmpty()) {
            return Mono.just(Verdict.unlimited(Verdict.Reason.NO_RULE));
        }
        boolean tierEnforced = ruleSet.enforced(request.tier());
        List<Check> checks = new ArrayList<>(applicable.size());
        double abuseFactor = abuseFactorOf(request);
        for (Rule rule : applicable) {
            boolean shadow = rule.mode() == Mode.SHADOW || !tierEnforced;
            if (rule.whenMissing() == WhenMissing.DENY && missingOf(rule, request) != null) {
                if (shadow) {
                    continue; // a shadow rule refuses nobody
                }
                RuleOutcome refusal = new RuleOutcome(new Check(rule, bucketOf(clientIds, rule, request), 1, false, permits),
                        false, 0, Duration.ZERO, Duration.ZERO);
                return Mono.just(Verdict.missingIdentity(refusal));
            }
            if (rule.limit().capsInProgress()) {
                checks.add(new Check(rule, bucketOf(clientIds, rule, request), 1, shadow, permits));
            }
            else if (rule.shards() > 1) {
                Check shard = shardCheck(rule, request, shadow, costs);
                checks.add(abuseFactor < 1 && abuse.scales(rule, request.tier())
                        ? shard.withRule(abuseScaling.scaled(shard.rule(), abuseFactor, shard.cost())) : shard);
            }
            else {
                BucketKey bucket = bucketOf(clientIds, rule, request);
                // A global rule holds this region's share of its limit; the cost stays the rule's (never clamped to
                // a small share, which would let a costly request through at a discount).
                Rule inRegion = rule;
                if (rule.scope() == Scope.GLOBAL) {
                    if (regions != null) {
                        inRegion = regions.ruleFor(rule, bucket);
                    }
                    else if (wholeGlobal.add(rule.id())) {
                        logger.warn("Rule '{}' is global, but ratelimit.regions is not configured: it is enforced "
                                + "whole in this region, as a regional rule.", rule.id());
                    }
                }
                int cost = costs.costOf(rule, rule.costOf(request));
                if (cost > rule.limit().quota()) {
                    warnNeverPasses(rule, request, cost);
                }
                if (abuseFactor < 1 && abuse.scales(rule, request.tier())) {
                    // After the region's share: the client keeps its factor of what this region holds.
                    inRegion = abuseScaling.scaled(inRegion, abuseFactor, cost);
                }
                checks.add(new Check(inRegion, bucket, cost, shadow));
            }
        }
        return store.evaluate(checks);
    }

    /**
     * The verdict for a request whose decision never came (late past every bound, or failed): each rule by its
     * failure mode, as when the store cannot answer, but nothing counted — an enforced {@link FailureMode#CLOSED}
     * rule refuses it with 503, every other rule lets it through. Adapters that wait for decisions on their own
     * threads use it as their backstop, so that a stuck decision keeps the promise of a fail-closed rule.
     *
     * <p>Never throws: it is what a failed decision falls back on, so a failure here would be the 5xx it exists to
     * prevent. Where the rules that apply cannot be worked out (the failure that broke the decision may be right
     * there), every enforced fail-closed rule of the set is taken to apply.
     */
    public Verdict undecided(RuleSet ruleSet, RequestAttributes request) {
        if (ruleSet.killSwitch()) {
            return Verdict.unlimited(Verdict.Reason.KILL_SWITCH);
        }
        if (!ruleSet.enforced(request.tier())) {
            return Verdict.unlimited(Verdict.Reason.NO_RULE);
        }
        List<RuleOutcome> refused = new ArrayList<>();
        for (Rule rule : applicableOrAll(ruleSet, request)) {
            if (rule.failureMode() == FailureMode.CLOSED && rule.mode() != Mode.SHADOW) {
                refused.add(new RuleOutcome(uncounted(rule, request), false, 0, WithoutStore.SHORTEST_RETRY_AFTER,
                        Duration.ZERO));
            }
        }
        return refused.isEmpty() ? Verdict.unlimited(Verdict.Reason.NO_RULE) : Verdict.unavailable(refused);
    }

    private static Collection<Rule> applicableOrAll(RuleSet ruleSet, RequestAttributes request) {
        try {
            return ruleSet.applicableTo(request);
        }
        catch (RuntimeException ex) {
            logger.error("Could not work out the rules that apply to an undecided request; taking every rule to apply",
                    ex);
            return ruleSet.rules().values();
        }
    }

    /**
     * The check of a fail-closed rule that no store is asked: a concurrency rule's carries a permit set of its own,
     * which nothing is granted into (a check of one must name one). A bucket whose name cannot be made is named by
     * the rule alone: nothing is counted in it.
     */
    private Check uncounted(Rule rule, RequestAttributes request) {
        RequestPermits none = rule.limit().capsInProgress() ? new RequestPermits() : null;
        BucketKey bucket;
        try {
            bucket = bucketOf(clientIds, rule, request);
        }
        catch (RuntimeException ex) {
            logger.error("Could not name the bucket of rule '{}' for an undecided request", rule.id(), ex);
            bucket = new BucketKey("", rule.id() + "@" + rule.limit().shape());
        }
        return new Check(rule, bucket, 1, false, none);
    }

    /**
     * Hot keys: a very large tenant's bucket split into {@code shards} sub-buckets over different store slots
     * ({@code rl:{tenant#0..15}}), each holding limit ÷ shards. The caller — the finest identity the request has — is
     * hashed to one of them, so one key's load spreads over shards, at a cost: a caller landing on a busy shard is
     * refused while others still have room, so the tenant can be held below its real limit when its callers are few
     * or uneven.
     */
    private Check shardCheck(Rule rule, RequestAttributes request, boolean shadow, RuleCosts costs) {
        BucketKey whole = bucketOf(clientIds, rule, request);
        int index = shardIndex(rule, request, whole);
        BucketKey bucket = shardKey(clientIds, whole, index);
        boolean quota = rule.limit().shardsInWholeParts();
        Rule[] cached = shardRules.get(rule.id());
        if (cached == null || cached[0] != rule) {
            // A calendar quota is a hard count per period: its shards hold whole parts that sum to the limit, one rule
            // per shard; a rate's shards each hold limit ÷ shards (rounded up).
            cached = quota ? new Rule[1 + rule.shards()]
                    : new Rule[] { rule, rule.withLimit(rule.limit().scaled(1.0 / rule.shards())) };
            cached[0] = rule;
            shardRules.put(rule.id(), cached);
        }
        if (quota && cached[1 + index] == null) {
            cached[1 + index] = rule.withLimit(shardLimit(rule, index));
        }
        int cost = costs.costOf(rule, rule.costOf(request));
        Rule shardRule = cached[quota ? 1 + index : 1];
        if (cost > shardRule.limit().quota() && cost <= rule.limit().quota()) {
            // A route whose cost exceeds one shard (the rule's own cost is refused at validation): the shard holds
            // one request's worth, so such requests can pass — a little beyond the limit, never all refused.
            shardRule = rule.withLimit(rule.limit().scaled((double) cost / rule.limit().quota()));
        }
        return new Check(shardRule, bucket, cost, shadow);
    }

    /** The factor the request's client's limits are scaled by (1: none, or no API key). */
    private double abuseFactorOf(RequestAttributes request) {
        if (abuse == null || request.apiKey() == null || abuse.held() == 0) {
            return 1;
        }
        return abuse.factorFor(clientIds.of(request.apiKey()));
    }

    /** The shard of {@code whole} the request's caller is hashed to (see {@link #shardCheck}). */
    static BucketKey shardOf(ClientIds clientIds, Rule rule, RequestAttributes request, BucketKey whole) {
        return shardKey(clientIds, whole, shardIndex(rule, request, whole));
    }

    /** The index of the shard of {@code whole} the request's caller is hashed to. */
    static int shardIndex(Rule rule, RequestAttributes request, BucketKey whole) {
        String caller = firstNonNull(request.apiKey(), request.user(), request.clientIp(), whole.partition());
        return Math.floorMod(caller.hashCode() * 31 + whole.partition().hashCode(), rule.shards());
    }

    private static BucketKey shardKey(ClientIds clientIds, BucketKey whole, int shard) {
        return new BucketKey(clientIds.of(whole.partition() + "#" + shard), whole.name());
    }

    /**
     * The limit shard {@code index} of a sharded rule holds: a calendar quota's whole parts summing to its limit (the
     * first {@code limit % shards} shards one more), so that the shards of a period never admit more than the limit
     * together; a rate's limit ÷ shards.
     */
    static Limit shardLimit(Rule rule, int index) {
        Limit limit = rule.limit();
        if (limit.shardsInWholeParts()) {
            long base = limit.quota() / rule.shards();
            return limit.share(base + (index < limit.quota() % rule.shards() ? 1 : 0));
        }
        return rule.limit().scaled(1.0 / rule.shards());
    }

    /** The first of the rule's key dimensions the request has no value for, or null. */
    public static Dimension missingOf(Rule rule, RequestAttributes request) {
        for (Dimension dimension : rule.key()) {
            if (dimension.valueOf(request) == null) {
                return dimension;
            }
        }
        return null;
    }

    /** Once per rule and route: a route whose cost exceeds a rule's whole quota can never pass that rule. */
    private void warnNeverPasses(Rule rule, RequestAttributes request, int cost) {
        if (neverPass.add(rule.id() + "\0" + request.routeId())) {
            logger.warn("Route {} costs {} tokens per request, more than the quota {} of rule '{}': its requests can "
                    + "never pass that rule. Lower the route's ratelimit-cost or raise the rule's limit.",
                    request.routeId(), cost, rule.limit().quota(), rule.id());
        }
    }

    private static String firstNonNull(String... values) {
        for (String value : values) {
            if (value != null) {
                return value;
            }
        }
        return "";
    }

    /**
     * The bucket a rule spends from for this request. A rule per API key is partitioned by the hashed key, so all of
     * one client's buckets share a store partition (one Redis Cluster slot, one script); other rules by the hash of
     * their key values. The name is the rule id and the shape of its state ({@code free.default@t},
     * {@code hourly@w3600000}), so that a rule changed to another algorithm starts on new buckets.
     */
    static BucketKey bucketOf(ClientIds clientIds, Rule rule, RequestAttributes request) {
        // A missing value (a rule sharing one bucket among the requests lacking it) is "": no header gives that.
        return bucketOf(clientIds, rule, request, rule.key().contains(Dimension.API_KEY)
                ? clientIds.of(request.apiKey() == null ? "" : request.apiKey()) : null);
    }

    /** {@link #bucketOf(ClientIds, Rule, RequestAttributes)} with the client id of the API key already worked out. */
    static BucketKey bucketOf(ClientIds clientIds, Rule rule, RequestAttributes request, String client) {
        List<Dimension> key = rule.key();
        String name = rule.id() + "@" + rule.limit().shape();
        if (key.contains(Dimension.API_KEY)) {
            if (key.size() == 1) {
                return new BucketKey(client, name);
            }
            return new BucketKey(client, name + ":" + clientIds.of(joined(key, request, Dimension.API_KEY)));
        }
        return new BucketKey(clientIds.of(joined(key, request, null)), name);
    }

    private static String joined(List<Dimension> key, RequestAttributes request, Dimension skip) {
        StringBuilder joined = new StringBuilder();
        for (Dimension dimension : key) {
            if (dimension != skip) {
                // Length-prefixed, so no two different value lists join to the same string.
                String value = dimension.valueOf(request);
                value = value == null ? "" : value;
                joined.append(dimension.name()).append('=').append(value.length()).append(':').append(value)
                        .append('\0');
            }
        }
        return joined.toString();
    }
}

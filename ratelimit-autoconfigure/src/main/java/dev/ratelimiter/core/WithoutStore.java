package dev.ratelimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Decides checks when the shared store cannot: each rule by its failure mode. {@link FailureMode#LOCAL} rules from
 * this instance's own buckets holding the doubled fair share (limit ÷ live instances × 2, never more than the
 * limit), {@link FailureMode#OPEN} rules allow, and an enforced {@link FailureMode#CLOSED} rule refuses the request
 * (a 503, see {@link Verdict#unavailable}).
 */
public final class WithoutStore {

    /**
     * The shortest Retry-After of a request refused by a closed rule while the store is gone: the header is whole
     * seconds, and a client told to come back at once would only hammer a store that cannot answer.
     */
    public static final Duration SHORTEST_RETRY_AFTER = Duration.ofSeconds(1);

    private final LocalBucketStore buckets;
    private final LiveInstances instances;
    private final StoreMetrics metrics;
    private final Supplier<Duration> closedRetryAfter;
    private final Map<String, Rule[]> fairShares = new ConcurrentHashMap<>();
    private volatile int sharesSizedFor;

    /**
     * @param buckets this instance's own buckets, for {@link FailureMode#LOCAL} rules
     * @param instances how many instances share the limits (each holds its doubled fair share)
     * @param metrics told of every decision made here
     * @param closedRetryAfter the Retry-After of a request a closed rule refuses
     */
    public WithoutStore(LocalBucketStore buckets, LiveInstances instances, StoreMetrics metrics,
            Supplier<Duration> closedRetryAfter) {
        this.buckets = buckets;
        this.instances = instances;
        this.metrics = metrics;
        this.closedRetryAfter = closedRetryAfter;
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

    public Verdict decide(List<Check> checks) {
        List<RuleOutcome> refused = new ArrayList<>();
        for (Check check : checks) {
            if (check.rule().failureMode() == FailureMode.CLOSED && !check.shadow()) {
                refused.add(new RuleOutcome(check, false, 0, closedRetryAfter.get(), Duration.ZERO));
            }
        }
        if (!refused.isEmpty()) {
            refused.forEach(outcome -> metrics.fallbackDecision(FailureMode.CLOSED));
            return Verdict.unavailable(refused);
        }
        List<Check> local = new ArrayList<>();
        for (Check check : checks) {
            if (check.rule().failureMode() == FailureMode.LOCAL) {
                local.add(check.withRule(fairShare(check.rule(), check.cost())));
            }
        }
        List<RuleOutcome> localOutcomes = local.isEmpty() ? List.of() : buckets.evaluateNow(local).outcomes();
        List<RuleOutcome> outcomes = new ArrayList<>(checks.size());
        int next = 0;
        for (Check check : checks) {
            FailureMode mode = check.rule().failureMode();
            metrics.fallbackDecision(mode == FailureMode.CLOSED ? FailureMode.OPEN : mode);
            if (mode == FailureMode.LOCAL) {
                outcomes.add(localOutcomes.get(next++));
            }
            else {
                // Open (or a closed rule in shadow): allowed, and the bucket is reported whole since nothing counted it.
                outcomes.add(new RuleOutcome(check, true, check.rule().limit().quota(), Duration.ZERO, Duration.ZERO));
            }
        }
        return Verdict.evaluated(outcomes, Verdict.Source.FALLBACK);
    }

    public int liveInstances() {
        return Math.max(1, instances.count());
    }

    /**
     * The rule with its limit cut to this instance's doubled fair share, cached until the instance count changes —
     * but never below the request's cost: a share too small for one request would refuse every such request on every
     * instance, so it holds one request's worth instead.
     */
    private Rule fairShare(Rule rule, int cost) {
        int count = liveInstances();
        if (count != sharesSizedFor) {
            fairShares.clear();
            sharesSizedFor = count;
        }
        double factor = Math.min(1.0, 2.0 / count);
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
}

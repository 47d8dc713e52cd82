package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import reactor.core.publisher.Mono;

/**
 * Decides one request: finds every rule that applies, checks them all in one store call, and returns the
 * verdict. Knows nothing of HTTP; the gateway filter adapts it.
 */
public final class RateLimitEvaluator {

    private final Supplier<RuleSet> rules;
    private final RateLimitStore store;

    public RateLimitEvaluator(Supplier<RuleSet> rules, RateLimitStore store) {
        this.rules = rules;
        this.store = store;
    }

    /** The rule set in force right now. */
    public RuleSet rules() {
        return rules.get();
    }

    /** Checks one request; {@code request.tier()} must already be resolved (see {@link RuleSet#tierOf}). */
    public Mono<Verdict> check(RequestAttributes request) {
        RuleSet ruleSet = rules.get();
        if (ruleSet.killSwitch()) {
            return Mono.just(Verdict.unlimited(Verdict.Reason.KILL_SWITCH));
        }
        List<Rule> applicable = ruleSet.applicableTo(request);
        if (applicable.isEmpty()) {
            return Mono.just(Verdict.unlimited(Verdict.Reason.NO_RULE));
        }
        boolean tierEnforced = ruleSet.enforced(request.tier());
        List<Check> checks = new ArrayList<>(applicable.size());
        for (Rule rule : applicable) {
            boolean shadow = rule.mode() == Mode.SHADOW || !tierEnforced;
            checks.add(new Check(rule, bucketOf(rule, request), rule.costOf(request), shadow));
        }
        return store.evaluate(checks);
    }

    /**
     * The bucket a rule spends from for this request. A rule per API key is partitioned by the hashed key, so all of
     * one client's buckets share a store partition (one Redis Cluster slot, one script); other rules by the hash of
     * their key values.
     */
    static BucketKey bucketOf(Rule rule, RequestAttributes request) {
        List<Dimension> key = rule.key();
        if (key.contains(Dimension.API_KEY)) {
            String client = ClientIds.of(request.apiKey());
            if (key.size() == 1) {
                return new BucketKey(client, rule.id());
            }
            return new BucketKey(client, rule.id() + ":" + ClientIds.of(joined(key, request, Dimension.API_KEY)));
        }
        return new BucketKey(ClientIds.of(joined(key, request, null)), rule.id());
    }

    private static String joined(List<Dimension> key, RequestAttributes request, Dimension skip) {
        StringBuilder joined = new StringBuilder();
        for (Dimension dimension : key) {
            if (dimension != skip) {
                // Length-prefixed, so no two different value lists join to the same string.
                String value = dimension.valueOf(request);
                joined.append(dimension.name()).append('=').append(value.length()).append(':').append(value)
                        .append('\0');
            }
        }
        return joined.toString();
    }
}

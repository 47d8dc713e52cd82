package dev.ratelimiter.core;

import java.util.List;

/**
 * One limit and the requests it applies to. Rules are data: they come from configuration or from the runtime
 * rule store, and a change to a rule's limit changes its buckets' parameters, never their state.
 *
 * @param id unique name; part of the bucket's store key and shown to clients in {@code RateLimit-Policy}
 * @param group rules of one group compete (the most specific match applies); rules of different groups all apply
 * @param match which requests the rule applies to
 * @param key the dimensions the rule's buckets are per (e.g. API key: one bucket per customer; route: one for all)
 * @param limit how much each bucket allows
 * @param cost tokens a request costs under this rule, or 0 to use the route's cost
 * @param mode enforce or shadow
 * @param failureMode what to do when the store cannot answer
 * @param storeMode exact (a script per request) or local (shares settled every interval)
 * @param shards hot-key protection: each bucket split into this many sub-buckets over different store slots, each
 * holding limit ÷ shards; callers are hashed to one of them (1: not split)
 * @param whenMissing what the rule does with a request lacking a value of its key (null: the default for its key,
 * {@link WhenMissing#defaultFor})
 * @param scope regional (each region holds the whole limit) or global (each region holds its share of it)
 * @param metering a cost measured from the request or the response instead of a constant; null: none
 */
public record Rule(String id, String group, Match match, List<Dimension> key, Limit limit, int cost, Mode mode,
        FailureMode failureMode, StoreMode storeMode, int shards, WhenMissing whenMissing, Scope scope,
        Metering metering) {

    /** A rule whose cost is a constant. */
    public Rule(String id, String group, Match match, List<Dimension> key, Limit limit, int cost, Mode mode,
            FailureMode failureMode, StoreMode storeMode, int shards, WhenMissing whenMissing, Scope scope) {
        this(id, group, match, key, limit, cost, mode, failureMode, storeMode, shards, whenMissing, scope, null);
    }

    /** A regional rule. */
    public Rule(String id, String group, Match match, List<Dimension> key, Limit limit, int cost, Mode mode,
            FailureMode failureMode, StoreMode storeMode, int shards, WhenMissing whenMissing) {
        this(id, group, match, key, limit, cost, mode, failureMode, storeMode, shards, whenMissing, Scope.REGIONAL);
    }

    /** A rule with the default {@link WhenMissing} for its key. */
    public Rule(String id, String group, Match match, List<Dimension> key, Limit limit, int cost, Mode mode,
            FailureMode failureMode, StoreMode storeMode, int shards) {
        this(id, group, match, key, limit, cost, mode, failureMode, storeMode, shards, null);
    }

    /** An exact, unsharded rule. */
    public Rule(String id, String group, Match match, List<Dimension> key, Limit limit, int cost, Mode mode,
            FailureMode failureMode) {
        this(id, group, match, key, limit, cost, mode, failureMode, StoreMode.EXACT, 1);
    }

    public Rule {
        String source = "rule '" + id + "'";
        PolicyNames.requireValid("rule id", id);
        PolicyNames.requireValid(source + " group", group);
        if (key == null || key.isEmpty()) {
            throw new InvalidLimitException("key", source + " must name at least one key dimension (for example "
                    + "api-key), so that its buckets are per something.");
        }
        if (cost < 0) {
            throw new InvalidLimitException("cost", source + " cost must be at least 1 (or left out to use the "
                    + "route's cost), but was " + cost + ".");
        }
        if (cost > limit.quota()) {
            throw new InvalidLimitException("cost", source + " cost " + cost + " is more than its quota "
                    + limit.quota() + "; such a request could never pass.");
        }
        if (limit.capsInProgress()) {
            if (storeMode == StoreMode.LOCAL) {
                throw new InvalidLimitException("store-mode", source + " caps requests in progress, which needs "
                        + "every instance's permits in one place; use store-mode exact.");
            }
            if (shards > 1) {
                throw new InvalidLimitException("shards", source + " caps requests in progress and cannot be split "
                        + "into shards; leave shards at 1.");
            }
            if (cost > 1) {
                throw new InvalidLimitException("cost", source + " caps requests in progress: every request takes "
                        + "one permit, so cost does not apply; leave it out.");
            }
        }
        if (storeMode == StoreMode.LOCAL && !limit.settlesLocally()) {
            throw new InvalidLimitException("store-mode", source + " has store-mode local, which settles token "
                    + "buckets only; use algorithm token-bucket or store-mode exact.");
        }
        if (shards < 1 || shards > 1024) {
            throw new InvalidLimitException("shards", source + " shards must be between 1 and 1024, but was "
                    + shards + ".");
        }
        if (shards > 1 && limit.quota() < shards) {
            throw new InvalidLimitException("shards", source + " splits a quota of " + limit.quota() + " into "
                    + shards + " shards; each shard needs at least 1.");
        }
        if (shards > 1 && cost > 0 && cost > limit.quota() / shards) {
            throw new InvalidLimitException("shards", source + " splits a quota of " + limit.quota() + " into "
                    + shards + " shards of " + limit.quota() / shards + ", less than its cost " + cost + ": no request "
                    + "could pass. Use at most " + limit.quota() / cost + " shards, or a lower cost.");
        }
        if (scope == null) {
            scope = Scope.REGIONAL;
        }
        if (scope == Scope.GLOBAL && !limit.capsInProgress() && !limit.splitsBetweenRegions()) {
            throw new InvalidLimitException("scope", source + " counts per calendar period, and a region keeps its "
                    + "count until the period ends: shares moved between regions mid-period would let the regions "
                    + "together admit more than the quota. Use scope regional (each region holds the whole quota), "
                    + "or a token bucket for a limit split between regions.");
        }
        if (scope == Scope.GLOBAL && limit.capsInProgress()) {
            throw new InvalidLimitException("scope", source + " caps requests in progress, which are held where they "
                    + "run; a global scope splits rates between regions. Use scope regional.");
        }
        if (scope == Scope.GLOBAL && shards > 1) {
            // Shares are per bucket; a shard's usage would have to be summed back to its bucket across regions.
            throw new InvalidLimitException("shards", source + " is global and split into " + shards + " shards; a "
                    + "global rule is split between regions already. Use shards 1, or scope regional for a hot key.");
        }
        if (metering != null) {
            metering.validate(source, limit, cost, storeMode);
        }
        key = List.copyOf(key);
        if (whenMissing == null) {
            whenMissing = WhenMissing.defaultFor(key);
        }
    }

    /** This rule with another limit, e.g. the fair share a fallback bucket holds. */
    public Rule withLimit(Limit other) {
        return new Rule(id, group, match, key, other, Math.min(cost, (int) Math.min(Integer.MAX_VALUE, other.quota())),
                mode, failureMode, storeMode, 1, whenMissing, scope, metering);
    }

    /** What the response is charged by, or null when the rule's cost is known before the request is forwarded. */
    public ResponseCharge responseCharge() {
        return metering == null ? null : metering.fromResponse();
    }

    /** Tokens a request costs under this rule (a concurrency rule: one permit, whatever the route's cost). */
    public int costOf(RequestAttributes request) {
        if (limit.capsInProgress()) {
            return 1;
        }
        if (metering != null && metering.fromResponse() != null) {
            return metering.fromResponse().minimum();
        }
        return cost > 0 ? cost : Math.max(1, request.cost());
    }
}

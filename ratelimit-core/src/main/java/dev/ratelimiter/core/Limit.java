package dev.ratelimiter.core;

import java.time.Duration;

/**
 * How much a bucket allows. Implementations are immutable and validated when built.
 *
 * <p>What differs per algorithm is decided on the algorithm, never by testing its type: the core asks the methods
 * below ({@link #capsInProgress()}, {@link #settlesLocally()}, ...), and modules the core cannot see (the Redis
 * store's script arguments, the {@code RateLimit-Policy} header, the operator endpoint's view of a rule) go through
 * {@link #match(Cases)}, which names every algorithm. See {@link Cases} for how to add one.
 */
public sealed interface Limit permits TokenBucketLimit, SlidingWindowLimit, ConcurrencyLimit,
        CalendarQuotaLimit {

    /** Requests (tokens) the limit allows per {@link #window()}: the bucket's capacity or the window's limit. */
    long quota();

    /** The period the quota is stated over: time to fill an empty bucket, or the window length. */
    Duration window();

    /** How long the store must keep this limit's state after the last request for no decision to change. */
    Duration stateLifetime();

    /** This limit with its amounts multiplied by {@code factor} (at least 1 each); the timing stays. */
    Limit scaled(double factor);

    /**
     * This limit holding {@code amount} (at least 1) of its quota, over the same window: a token bucket's capacity and
     * its rate both in proportion, so shares of one limit that sum to its quota also sum to its rate. The shape stays,
     * so a bucket whose share changes keeps its state.
     */
    Limit share(long amount);

    /**
     * What the stored state of this limit looks like, as part of its buckets' names: a rule changed to another
     * algorithm (or a window of another length, whose counters mean something else) gets new buckets and never meets
     * state of another shape; the old buckets expire on their own.
     */
    String shape();

    /**
     * Whether this limit caps requests in progress rather than requests per period: each request takes one permit
     * (its cost does not apply), held until the request ends and given back then, so a check of it needs the
     * request's {@link RequestPermits}. Such a limit is held where its requests run: it cannot be settled locally
     * (store-mode local), split into shards, or split between regions (scope global).
     */
    boolean capsInProgress();

    /**
     * Whether store-mode local can hold this limit: shares of a token bucket taken from the store and settled every
     * interval ({@code LeaseStore}, and {@code settle.lua} in the Redis store).
     */
    boolean settlesLocally();

    /**
     * Whether a global rule may hold this limit: its regions' shares are moved while it runs (the rebalancer), and the
     * state a region built on its old share stays there. A rate forgets it within a window, so moved quota can be
     * over-spent by at most what moved, once; a count per calendar period keeps it until the boundary, and every move
     * of the period can add to it again.
     */
    default boolean splitsBetweenRegions() {
        return !capsInProgress();
    }

    /**
     * Whether the shards of a sharded rule of this limit hold whole parts that add up to it, rather than limit ÷ shards
     * rounded up each: a hard count per period, where the rounding would let the shards together admit more than the
     * limit for the whole period (16 shards of 7 for a quota of 100). A rate's rounding lets a little more through,
     * within a window.
     */
    default boolean shardsInWholeParts() {
        return false;
    }

    /** The {@code cases} method of this limit's algorithm, given this limit. */
    <R> R match(Cases<R> cases);

    /**
     * One method per algorithm: what a caller does with each. A caller outside the core that decides something per
     * algorithm implements this, so that adding an algorithm fails to compile until it says what the new one does.
     *
     * <p>To add an algorithm:
     * <ol>
     * <li>a record implementing {@link Limit} (and listed in its {@code permits}), with a validating {@code of}
     * factory, and its method here, which it answers in {@link #match};</li>
     * <li>then the compiler lists every handler: the methods of {@link Limit} it must implement, the core's
     * in-memory state ({@code BucketState}: its arithmetic beside the Lua's), the Redis store's script arguments
     * ({@code RedisRateLimitStore.SCRIPT_ARGUMENTS}, {@code RedisFallbackCharges}), the {@code RateLimit-Policy}
     * header and the unknown-keys rule (through {@link #capsInProgress()}), the operator endpoint's view
     * ({@code RuleView});</li>
     * <li>the compiler cannot list the rest. The Lua side is in
     * {@code ratelimit-redis/src/main/resources/META-INF/scripts/ratelimit/rate_limit.lua}: the per-algorithm branch
     * of {@code decide}, keyed by the algorithm code the Redis store sends ({@code 't'}, {@code 'w'}, {@code 'c'}, {@code 'q'}),
     * and {@code write_state}; a rate limit is also charged back by {@code charge.lua} (and a token bucket settled by
     * {@code settle.lua}), and read without spending by {@code peek.lua} (its entry in {@code PEEK}: the usage API). The properties are in {@code LimitProperties} (its {@code Algorithm} and the settings) and
     * {@code RuleFactory.limit}; the OpenAPI document is
     * {@code ratelimit-autoconfigure/src/main/resources/META-INF/ratelimit/rules-api.openapi.yaml}
     * ({@code RuleDocument}: the {@code algorithm} enum and the settings).</li>
     * </ol>
     * The whole list, one line per file, is in ARCHITECTURE.md, "Adding an algorithm".
     *
     * @param <R> what the caller makes of a limit
     */
    interface Cases<R> {

        R tokenBucket(TokenBucketLimit limit);

        R slidingWindow(SlidingWindowLimit limit);

        R concurrency(ConcurrencyLimit limit);

        R calendarQuota(CalendarQuotaLimit limit);
    }
}

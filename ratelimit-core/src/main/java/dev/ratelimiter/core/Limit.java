package dev.ratelimiter.core;

import java.time.Duration;

/**
 * How much a bucket allows. Implementations are immutable and validated when built.
 */
public sealed interface Limit permits TokenBucketLimit, SlidingWindowLimit, ConcurrencyLimit {

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
}

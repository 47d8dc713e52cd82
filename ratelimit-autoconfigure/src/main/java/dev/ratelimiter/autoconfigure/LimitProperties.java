package dev.ratelimiter.autoconfigure;

import java.time.Duration;

import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.StoreMode;

/**
 * One limit as written in configuration: a token bucket (capacity, refill-tokens, refill-period), a sliding
 * window (limit, window) or a concurrency cap (max-in-progress, lease).
 */
public class LimitProperties {

    /**
     * Counting algorithm: token-bucket (bursts allowed, average held), sliding-window (at most limit per window) or
     * concurrency (at most max-in-progress requests in progress at once).
     */
    private Algorithm algorithm = Algorithm.TOKEN_BUCKET;

    /**
     * Token bucket: the largest burst, tokens a full bucket holds.
     */
    private long capacity;

    /**
     * Token bucket: tokens added back every refill period, continuously (not in steps).
     */
    private long refillTokens;

    /**
     * Token bucket: period over which refill-tokens are added back.
     */
    private Duration refillPeriod = Duration.ofSeconds(1);

    /**
     * Sliding window: requests allowed per window.
     */
    private long limit;

    /**
     * Sliding window: the window length.
     */
    private Duration window;

    /**
     * Concurrency: requests allowed in progress at once, per key.
     */
    private long maxInProgress;

    /**
     * Concurrency: how long a permit outlives an instance that died holding it. Running requests renew their permits
     * every third of it, so it may be shorter than the slowest request.
     */
    private Duration lease = ConcurrencyLimit.DEFAULT_LEASE;

    /**
     * What the limit does when the store cannot answer: local (this instance's share), open or closed.
     */
    private FailureMode failureMode = FailureMode.LOCAL;

    /**
     * Where the limit is decided: exact (one store script per request) or local (this instance's share, settled with
     * the store every settle interval; token buckets only).
     */
    private StoreMode storeMode = StoreMode.EXACT;

    /**
     * Where the limit holds: regional (each region enforces all of it on its own Redis) or global (split between the
     * regions of ratelimit.regions, each holding its share, moved by the rebalancer toward the regions that refuse).
     */
    private Scope scope = Scope.REGIONAL;

    public Scope getScope() {
        return scope;
    }

    public void setScope(Scope scope) {
        this.scope = scope;
    }

    public StoreMode getStoreMode() {
        return storeMode;
    }

    public void setStoreMode(StoreMode storeMode) {
        this.storeMode = storeMode;
    }

    public FailureMode getFailureMode() {
        return failureMode;
    }

    public void setFailureMode(FailureMode failureMode) {
        this.failureMode = failureMode;
    }

    public long getMaxInProgress() {
        return maxInProgress;
    }

    public void setMaxInProgress(long maxInProgress) {
        this.maxInProgress = maxInProgress;
    }

    public Duration getLease() {
        return lease;
    }

    public void setLease(Duration lease) {
        this.lease = lease;
    }

    public Algorithm getAlgorithm() {
        return algorithm;
    }

    public void setAlgorithm(Algorithm algorithm) {
        this.algorithm = algorithm;
    }

    public long getCapacity() {
        return capacity;
    }

    public void setCapacity(long capacity) {
        this.capacity = capacity;
    }

    public long getRefillTokens() {
        return refillTokens;
    }

    public void setRefillTokens(long refillTokens) {
        this.refillTokens = refillTokens;
    }

    public Duration getRefillPeriod() {
        return refillPeriod;
    }

    public void setRefillPeriod(Duration refillPeriod) {
        this.refillPeriod = refillPeriod;
    }

    public long getLimit() {
        return limit;
    }

    public void setLimit(long limit) {
        this.limit = limit;
    }

    public Duration getWindow() {
        return window;
    }

    public void setWindow(Duration window) {
        this.window = window;
    }

    /** Counting algorithms. */
    public enum Algorithm {
        /** A bucket of capacity tokens refilled continuously: allows bursts, holds the average. */
        TOKEN_BUCKET,
        /** At most limit requests in any window, from two weighted fixed-window counters. */
        SLIDING_WINDOW,
        /** At most max-in-progress requests in progress at once; a permit is held until the response ends. */
        CONCURRENCY
    }
}

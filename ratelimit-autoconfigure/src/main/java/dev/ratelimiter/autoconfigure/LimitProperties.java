package dev.ratelimiter.autoconfigure;

import java.time.Duration;

import dev.ratelimiter.core.ConcurrencyLimit;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.StoreMode;

/**
 * One limit as written in configuration: a token bucket (capacity, refill-tokens, refill-period), a sliding
 * window (limit, window), a concurrency cap (max-in-progress, lease) or a calendar quota (limit, period, zone,
 * anchor-day, week-start).
 */
public class LimitProperties {

    /**
     * Counting algorithm: token-bucket (bursts allowed, average held), sliding-window (at most limit per window),
     * concurrency (at most max-in-progress requests in progress at once) or calendar-quota (at most limit per
     * calendar day, week or month in a time zone, all of it back at the period's boundary).
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
     * Sliding window: requests allowed per window. Calendar quota: requests (tokens, with cost) allowed per period.
     */
    private long limit;

    /**
     * Sliding window: the window length.
     */
    private Duration window;

    /**
     * Calendar quota: the period the quota renews with: day, week or month.
     */
    private String period;

    /**
     * Calendar quota: the time zone the calendar is read in, an IANA id such as Europe/Berlin (default UTC): a day
     * ends at midnight there, 23 or 25 hours after it began across a daylight-saving change.
     */
    private String zone;

    /**
     * Calendar quota, period month: the day of the month a period starts on (1 to 31, default 1), a billing cycle
     * day; a month shorter than it starts the period on its last day (anchor-day 31: 28 or 29 February, 30 April).
     */
    private Integer anchorDay;

    /**
     * Calendar quota, period week: the first day of a week (monday to sunday, default monday).
     */
    private String weekStart;

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

    public String getPeriod() {
        return period;
    }

    public void setPeriod(String period) {
        this.period = period;
    }

    public String getZone() {
        return zone;
    }

    public void setZone(String zone) {
        this.zone = zone;
    }

    public Integer getAnchorDay() {
        return anchorDay;
    }

    public void setAnchorDay(Integer anchorDay) {
        this.anchorDay = anchorDay;
    }

    public String getWeekStart() {
        return weekStart;
    }

    public void setWeekStart(String weekStart) {
        this.weekStart = weekStart;
    }

    /** Counting algorithms. */
    public enum Algorithm {
        /** A bucket of capacity tokens refilled continuously: allows bursts, holds the average. */
        TOKEN_BUCKET,
        /** At most limit requests in any window, from two weighted fixed-window counters. */
        SLIDING_WINDOW,
        /** At most max-in-progress requests in progress at once; a permit is held until the response ends. */
        CONCURRENCY,
        /** At most limit requests per calendar day, week or month in a time zone; all of it back at the boundary. */
        CALENDAR_QUOTA
    }
}

package dev.ratelimiter.core;

import java.time.Duration;

/**
 * A cap on requests in progress rather than on requests per period: a permit is taken before the request is
 * forwarded and given back when its response completes, fails or is cancelled. For slow endpoints, where what
 * hurts is not how many requests a client sends but how many it has open at once.
 *
 * <p>Each permit is held under a lease: the instance holding it renews it while the request runs, so a permit held
 * by an instance that dies is freed within one lease.
 *
 * @param maxInProgress requests allowed in progress at once
 * @param lease how long a permit outlives the instance holding it
 */
public record ConcurrencyLimit(long maxInProgress, Duration lease) implements Limit {

    /** The default lease: long enough to ride out a renewal missed under load, short enough to heal soon. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

    /**
     * The Retry-After a refused request is given. A permit frees when some request ends, which no one can predict;
     * a second is short enough for a client to try again soon and long enough not to invite a busy loop.
     */
    public static final Duration RETRY_HINT = Duration.ofSeconds(1);

    /** Validates; {@code source} names the settings in messages. */
    public static ConcurrencyLimit of(String source, long maxInProgress, Duration lease) {
        if (maxInProgress < 1) {
            throw new InvalidLimitException(source + "max-in-progress", source + "max-in-progress must be at least 1 "
                    + "(requests allowed in progress at once), but was " + maxInProgress + ".");
        }
        if (lease == null || lease.toMillis() < 1_000) {
            throw new InvalidLimitException(source + "lease", source + "lease must be a duration of at least 1s "
                    + "(permits are renewed every third of it), but was " + lease + ".");
        }
        Bounds.amount(source + "max-in-progress", maxInProgress, "requests allowed in progress at once");
        Bounds.period(source + "lease", lease, Bounds.MAX_LEASE, "how long a permit outlives its instance");
        return new ConcurrencyLimit(maxInProgress, lease);
    }

    @Override
    public long quota() {
        return maxInProgress;
    }

    /** Concurrency has no period; the lease is the nearest thing (how long a lost permit can count). */
    @Override
    public Duration window() {
        return lease;
    }

    @Override
    public Duration stateLifetime() {
        return lease;
    }

    /** A set of permits under leases. */
    @Override
    public String shape() {
        return "c";
    }

    @Override
    public ConcurrencyLimit share(long amount) {
        return new ConcurrencyLimit(Math.max(1, amount), lease);
    }

    @Override
    public ConcurrencyLimit scaled(double factor) {
        return new ConcurrencyLimit(Math.max(1, (long) Math.ceil(maxInProgress * factor)), lease);
    }

    @Override
    public boolean capsInProgress() {
        return true;
    }

    @Override
    public boolean settlesLocally() {
        return false;
    }

    @Override
    public <R> R match(Cases<R> cases) {
        return cases.concurrency(this);
    }
}

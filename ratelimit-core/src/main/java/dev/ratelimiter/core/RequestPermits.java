package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The concurrency permits one request holds, wherever they were granted, given back exactly once when the request
 * ends — whenever the grant lands.
 *
 * <p>A permit is owned by the request, not by the verdict that reports it. A verdict can be lost on its way (the
 * store answered after its timeout, the client went away while the answer travelled to the filter, a Redis Cluster
 * slot granted a permit for a request another slot refused), but each store that grants a permit tells this object
 * itself ({@link #granted}), from the store's own reply. So there is no race to lose: a grant recorded before
 * {@link #end()} is given back by it; a grant landing after it is given back at once.
 *
 * <p>One id for all of a request's permits ({@code <random process prefix>:<counter>}): unique across every instance
 * sharing a store, each permit living in its own bucket. Guarded by its own monitor; at most a request thread and a
 * store reply contend for it.
 */
public final class RequestPermits {

    /**
     * Random per process, without SecureRandom: this class is first used on a Netty event loop, where reading the OS's
     * entropy source could block. Uniqueness, not secrecy, is what counts here.
     */
    private static final String PROCESS = Long.toUnsignedString(ThreadLocalRandom.current().nextLong()
            ^ ProcessHandle.current().pid() << 40 ^ System.nanoTime(), 36) + ":";
    private static final AtomicLong counter = new AtomicLong();

    private final String id = PROCESS + Long.toString(counter.incrementAndGet(), 36);
    private List<Grant> grants;
    private boolean ended;

    /** Where permits were granted, and how to give them back there. */
    @FunctionalInterface
    public interface Owner {

        /** Starts looking after permits just granted (a store with leases renews them); by default nothing. */
        default void hold(List<Check> permits) {
        }

        /** Gives permits back; idempotent, never fails (a permit that cannot be given back ends with its lease). */
        void giveBack(List<Check> permits);
    }

    private record Grant(Owner owner, List<Check> permits) {
    }

    /** The id the request's permits carry in every bucket. */
    public String id() {
        return id;
    }

    /**
     * Records permits a store granted (or may have granted: a call that failed after it was sent). Given back at once
     * when the request has already ended.
     */
    public void granted(Owner owner, List<Check> permits) {
        if (permits.isEmpty()) {
            return;
        }
        synchronized (this) {
            if (!ended) {
                if (grants == null) {
                    grants = new ArrayList<>(2);
                }
                grants.add(new Grant(owner, permits));
                // Under the monitor: end() cannot slip between recording a permit and its owner starting to renew it.
                owner.hold(permits);
                return;
            }
        }
        owner.giveBack(permits);
    }

    /** The request is over (completed, failed or cancelled): every permit granted so far, and later, is given back. */
    public void end() {
        List<Grant> toGiveBack;
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            toGiveBack = grants;
            grants = null;
        }
        if (toGiveBack != null) {
            for (Grant grant : toGiveBack) {
                grant.owner.giveBack(grant.permits);
            }
        }
    }

    /** Whether {@link #end()} was called. */
    public synchronized boolean ended() {
        return ended;
    }

    /** Permits recorded and not yet given back (for tests and the actuator view). */
    public synchronized int held() {
        return grants == null ? 0 : grants.stream().mapToInt(grant -> grant.permits.size()).sum();
    }

    @Override
    public String toString() {
        return id;
    }
}

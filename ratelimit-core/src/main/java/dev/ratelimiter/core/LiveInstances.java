package dev.ratelimiter.core;

/**
 * How many gateway instances share the limits right now: the fallback divides each limit among them. Implementations
 * remember the last count they saw when the store that tells them is gone.
 */
@FunctionalInterface
public interface LiveInstances {

    /** One instance alone (memory mode, or before anything else is known). */
    LiveInstances SINGLE = () -> 1;

    /** At least 1. */
    int count();
}

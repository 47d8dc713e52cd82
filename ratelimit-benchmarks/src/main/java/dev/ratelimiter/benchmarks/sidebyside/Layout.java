package dev.ratelimiter.benchmarks.sidebyside;

/**
 * Where the processes of a run may run. Rounds interleave the layouts (round 1 shared, round 1 pinned, round 2
 * shared, …), and ratios to limiter off are taken within one round and one layout.
 */
enum Layout {

    /** Every process on every core the benchmark may use: the gateway competes with Redis, nginx and wrk. */
    SHARED("shared", "every process on every core: the gateway competes with Redis, the upstream and the load"),

    /**
     * The gateway alone on one core ({@code taskset -c <first> java …}: its JVM sees one CPU and picks SerialGC, as
     * in a one-CPU container), Redis (all its
     * threads), nginx (master and worker), wrk and the benchmark's own JVM on another: a stand-in for Redis on a host
     * of its own, and the gateway's CPU per request without neighbours on its core.
     */
    PINNED("pinned", "the gateway alone on one core (its JVM sees one CPU, so its default GC is Serial), Redis, the "
            + "upstream, the load and this driver on another: a stand-in for Redis on a host of its own");

    final String id;
    final String description;

    Layout(String id, String description) {
        this.id = id;
        this.description = description;
    }

    static Layout of(String id) {
        for (Layout candidate : values()) {
            if (candidate.id.equals(id)) {
                return candidate;
            }
        }
        throw new IllegalArgumentException("unknown layout '" + id + "'; layouts are shared, pinned");
    }
}

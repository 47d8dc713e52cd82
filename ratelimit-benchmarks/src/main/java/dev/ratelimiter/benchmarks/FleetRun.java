package dev.ratelimiter.benchmarks;

import java.util.List;
import java.util.Map;

import dev.ratelimiter.benchmarks.FleetOptions.Mode;
import dev.ratelimiter.benchmarks.FleetOptions.Topology;
import dev.ratelimiter.benchmarks.sidebyside.CommandStats;
import dev.ratelimiter.core.Verdict;

/**
 * What one fleet did in its measured window, and what follows from it. Per-second figures are the real fleet's:
 * counted in the simulation's time and multiplied by the time scale.
 *
 * @param seconds the window, in the simulation's time
 * @param window the fleet's own counts in the window
 * @param primaryNames {@code host:port} of each primary
 * @param primaries what each primary did in the window, by Redis's own count
 * @param replicaCpuMicros CPU the replicas used in the window (they share the machine)
 * @param failover whether the primaries changed in the window (a primary replaced by its replica)
 * @param machineBusy share of all cores busy in the window ({@code /proc/stat})
 * @param machineNice share of all cores spent in processes of lowered priority (other work on a shared machine,
 * which yields to the simulation)
 * @param cores cores of the machine
 * @param jvmCpuSeconds CPU of this JVM in the window
 * @param threadGroups CPU of this JVM's threads in the window, by group
 * @param reportsSent bucket reports sent to Redis over the whole run, warm-up included
 * @param bucketSettlesRedisRan bucket-settles Redis ran over the whole run (its HGETALL calls: only the settle
 * script reads a hash whole)
 * @param liveInstancesMin the fewest live instances any instance counted when the window began
 */
record FleetRun(Mode mode, Topology topology, double timeScale, double seconds, FleetTally.Snapshot window,
        List<String> primaryNames, List<CommandStats> primaries, long replicaCpuMicros, boolean failover,
        double machineBusy,
        double machineNice, int cores,
        double jvmCpuSeconds, Map<String, Double> threadGroups, long reportsSent, long bucketSettlesRedisRan,
        int liveInstancesMin) {

    /** In Redis, each settled bucket is one HGETALL (settle.lua), each decided token bucket one HMGET (rate_limit.lua). */
    String unitCommand() {
        return mode == Mode.LOCAL ? "hgetall" : "hmget";
    }

    /** What Redis does per unit of work in this mode. */
    String unitName() {
        return mode == Mode.LOCAL ? "bucket-settle" : "decision";
    }

    double perSecond(double count) {
        return count / seconds * timeScale;
    }

    double asked() {
        return perSecond(window.get(FleetTally.Count.MADE) + window.get(FleetTally.Count.SKIPPED));
    }

    double made() {
        return perSecond(window.get(FleetTally.Count.MADE));
    }

    long verdicts() {
        return window.verdicts();
    }

    long fallbacks() {
        return window.source(Verdict.Source.FALLBACK);
    }

    long refused() {
        return window.get(FleetTally.Count.REFUSED);
    }

    CommandStats total() {
        return FleetSimulation.sum(primaries);
    }

    /** Units of work (bucket-settles or decisions) Redis ran per second on each primary. */
    List<Double> unitsPerSecond() {
        return primaries.stream().map(p -> perSecond(p.calls(unitCommand()))).toList();
    }

    /** Redis CPU per unit of work, all its CPU counted (heartbeats, connections, replication). */
    double cpuMicrosPerUnit() {
        CommandStats total = total();
        long units = total.calls(unitCommand());
        return units == 0 ? Double.NaN : (double) total.cpuMicros() / units;
    }

    /** Units of work one primary carries at 100 % of its core. */
    double sustainedPerPrimary() {
        return 1e6 / cpuMicrosPerUnit();
    }

    double luaMicrosPerCall() {
        CommandStats total = total();
        return total.scriptCalls() == 0 ? Double.NaN : (double) total.scriptMicros() / total.scriptCalls();
    }

    /** Exact mode: token-bucket decisions per decision script call (heartbeats, the only ZCARD, left out). */
    double decisionsPerCall() {
        CommandStats total = total();
        long calls = total.scriptCalls() - total.calls("zcard");
        return calls <= 0 ? Double.NaN : (double) total.calls("hmget") / calls;
    }

    /** Buckets one instance reports per settle, on average. */
    double bucketsPerSettle() {
        long settles = window.get(FleetTally.Count.SETTLES);
        return settles == 0 ? Double.NaN : (double) window.get(FleetTally.Count.REPORTS) / settles;
    }
}

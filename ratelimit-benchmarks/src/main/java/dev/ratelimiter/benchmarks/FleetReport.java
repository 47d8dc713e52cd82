package dev.ratelimiter.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.ratelimiter.benchmarks.FleetOptions.Mode;
import dev.ratelimiter.benchmarks.sidebyside.CommandStats;
import dev.ratelimiter.core.FallbackReason;
import dev.ratelimiter.core.StoreMetrics;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.redis.RedisKeys;

/**
 * {@link FleetSimulation}'s report in markdown: the fleet worked out on paper, a table with one row per mode ×
 * topology (figures per primary are listed primary by primary, " / " between them), and for each row where the CPU
 * went and what else the fleet saw.
 */
final class FleetReport {

    /** The settle client's and the settle script's most buckets per call ({@code RedisSettleClient}). */
    static final int BUCKETS_PER_SETTLE_CALL = 32;

    private FleetReport() {
    }

    static String of(FleetOptions options, List<FleetRun> runs) {
        StringBuilder out = new StringBuilder();
        out.append("## Fleet simulation\n\n`java -Xmx4g -cp ratelimit-benchmarks/target/benchmarks.jar "
                + "dev.ratelimiter.benchmarks.FleetSimulation ").append(options.commandLine()).append("`\n\n");
        out.append("### On paper\n\n");
        paper(options).forEach(line -> out.append("- ").append(line).append('\n'));
        out.append("\n### Measured").append(options.timeScale() == 1 ? ""
                : String.format(Locale.ROOT, " (at time scale %s: per-second figures × %s)", options.timeScale(),
                        options.timeScale())).append("\n\n");
        out.append("| mode | topology | decisions/s asked → made | fallback | refused | settles/s (bucket-settles/s) "
                + "sent | script calls/s per primary | bucket-settles (local) or decisions (exact)/s per primary "
                + "| commands/s per primary | Redis CPU per primary (cores) | Lua µs/call | Redis CPU µs per unit "
                + "| one primary sustains (units/s) | machine CPU busy | JVM CPU (cores) |\n");
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        runs.forEach(run -> out.append(tableRow(run)).append('\n'));
        out.append('\n');
        runs.forEach(run -> out.append("- ").append(details(run)).append('\n'));
        out.append('\n');
        runs.forEach(run -> out.append("- ").append(capacity(options, run)).append('\n'));
        return out.toString();
    }

    /** One line as a run ends, before the whole report. */
    static String row(FleetRun run) {
        return tableRow(run) + "\n" + details(run);
    }

    /** The fleet's figures worked out from the options alone. */
    static List<String> paper(FleetOptions o) {
        KeyDistribution keys = KeyDistribution.of(o.keys(), o.zipfExponent(), o.seed());
        double total = o.instances() * o.rate();
        double intervalSeconds = FleetOptions.settleIntervalSeconds();
        double perInterval = o.rate() * intervalSeconds;
        double touched = keys.expectedDistinct(perInterval);
        double reported = reportedPerSettle(o, keys);
        double settlesPerSecond = o.instances() / intervalSeconds;
        double bucketSettles = settlesPerSecond * reported;
        double callsStandalone = Math.ceil(reported / BUCKETS_PER_SETTLE_CALL);
        double callsCluster = RedisKeys.SETTLE_SLOTS
                * Math.max(1, Math.ceil(reported / RedisKeys.SETTLE_SLOTS / BUCKETS_PER_SETTLE_CALL));
        double heartbeats = o.instances() / (double) FleetOptions.HEARTBEAT_INTERVAL.toSeconds();
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "Load: %d instances × %,.0f/s = %,.0f decisions/s over %,d keys (%s): "
                + "%.1f/s per key on average, the busiest %.1f/s. Each key has one token bucket, the sample gateway's "
                + "pro tier (burst %d, refilled %d/s): %d keys above it, refusals expected ≥ %.1f %%.",
                o.instances(), o.rate(), total, o.keys(),
                o.zipfExponent() == 0 ? "uniform" : "zipf, exponent " + o.zipfExponent(), total / o.keys(),
                total * keys.hottest(), FleetOptions.CAPACITY, FleetOptions.REFILL_PER_SECOND,
                keys.keysOver(total, FleetOptions.REFILL_PER_SECOND),
                100 * keys.shareOver(total, FleetOptions.REFILL_PER_SECOND)));
        lines.add(String.format(Locale.ROOT, "Local: each instance decides %.0f requests per %.0f ms settle interval, "
                + "over %.0f distinct keys. A key is reported at the settle after its use (its demand) and, idle, at "
                + "the next one (its share given back): %.0f keys per settle (distinct keys of two intervals) → "
                + "bucket-settles/s = %d instances × %.0f × %.0f settles/s = **%,.0f**. In script calls of at most %d "
                + "buckets: %.0f per settle on one server (%,.0f calls/s); on a cluster, grouped by %d settle slots, "
                + "≈ %.0f per settle (%,.0f calls/s over the primaries). Plus %.0f heartbeats/s (%d instances every %d "
                + "s).", perInterval, intervalSeconds * 1000, touched, reported, o.instances(), reported,
                1 / intervalSeconds, bucketSettles, BUCKETS_PER_SETTLE_CALL, callsStandalone,
                callsStandalone * settlesPerSecond, RedisKeys.SETTLE_SLOTS, callsCluster,
                callsCluster * settlesPerSecond, heartbeats, o.instances(),
                FleetOptions.HEARTBEAT_INTERVAL.toSeconds()));
        if (o.sticky()) {
            double perKey = total / o.keys();
            double want = 1 + Math.ceil(perKey * StoreStack.DEFAULT_SETTLE_MAX_SILENCE.toNanos() / 1e9 * 1.5);
            lines.add(String.format(Locale.ROOT, "Local, sticky routing (each key on one instance): settled by need, a "
                    + "key at %.1f/s alone on its instance wants %.0f tokens a silence (%d s), %s half its bucket of "
                    + "%d: %s. The figure above (two reports per key and interval) is what settling every interval "
                    + "would cost.", perKey, want, StoreStack.DEFAULT_SETTLE_MAX_SILENCE.toSeconds(),
                    want * 2 <= FleetOptions.CAPACITY ? "within" : "beyond", FleetOptions.CAPACITY,
                    want * 2 <= FleetOptions.CAPACITY ? String.format(Locale.ROOT, "silent, about one bucket-settle "
                            + "per key and silence, %,.0f bucket-settles/s",
                            o.keys() / (StoreStack.DEFAULT_SETTLE_MAX_SILENCE.toNanos() / 1e9 - 0.1))
                            : "not silent, settled every interval while in use"));
        }
        lines.add(String.format(Locale.ROOT, "Exact: **%,.0f** decisions/s, one bucket each, every one in Redis; "
                + "script calls/s = decisions/s ÷ decisions per call (the requests that arrived while the previous "
                + "call was written share one: measured below). Plus %.0f heartbeats/s.", total, heartbeats));
        return lines;
    }

    /** Keys one instance reports per settle: those it saw in the last two intervals (a use, then a give-back). */
    private static double reportedPerSettle(FleetOptions o, KeyDistribution keys) {
        return keys.expectedDistinct(2 * o.rate() * FleetOptions.settleIntervalSeconds());
    }

    private static String tableRow(FleetRun r) {
        CommandStats total = r.total();
        return String.format(Locale.ROOT, "| %s | %s | %,.0f → %,.0f | %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f "
                + "| %,.0f | %.0f %% of %d cores | %.2f |",
                r.mode().name().toLowerCase(Locale.ROOT),
                r.topology().name().toLowerCase(Locale.ROOT) + (r.failover() ? " (failover)" : ""), r.asked(),
                r.made(), share(r.fallbacks(), r.verdicts()), share(r.refused(), r.verdicts()),
                r.mode() == Mode.LOCAL ? String.format(Locale.ROOT, "%,.0f (%,.0f)",
                        r.perSecond(r.window().get(FleetTally.Count.SETTLES)),
                        r.perSecond(r.window().get(FleetTally.Count.REPORTS))) : "–",
                perPrimary(r, p -> r.perSecond(p.scriptCalls()), "%,.0f"),
                perPrimary(r, p -> r.perSecond(p.calls(r.unitCommand())), "%,.0f"),
                perPrimary(r, p -> r.perSecond(p.commands()), "%,.0f"),
                perPrimary(r, p -> r.perSecond(p.cpuMicros() / 1e6), "%.2f"),
                r.luaMicrosPerCall(), r.cpuMicrosPerUnit(), r.sustainedPerPrimary(), 100 * r.machineBusy(), r.cores(),
                r.jvmCpuSeconds() / r.seconds())
                + (total.scriptCalls() == 0 ? " (no script call)" : "");
    }

    private static String perPrimary(FleetRun r, Function<CommandStats, Double> figure, String format) {
        return r.primaries().stream().map(p -> String.format(Locale.ROOT, format, figure.apply(p)))
                .collect(Collectors.joining(" / "));
    }

    private static String share(long part, long whole) {
        return String.format(Locale.ROOT, "%,d (%.2f %%)", part, whole == 0 ? 0 : 100.0 * part / whole);
    }

    /** Where the CPU went, and what else the fleet saw. Figures here are in the simulation's own time. */
    static String details(FleetRun r) {
        FleetTally.Snapshot w = r.window();
        double seconds = r.seconds();
        double threads = r.threadGroups().values().stream().mapToDouble(Double::doubleValue).sum();
        double redis = r.total().cpuMicros() / 1e6 / seconds;
        double replicas = r.replicaCpuMicros() / 1e6 / seconds;
        String groups = r.threadGroups().entrySet().stream()
                .filter(e -> e.getValue() / seconds >= 0.01)
                .sorted(Map.Entry.<String, Double>comparingByValue(Comparator.reverseOrder()))
                .map(e -> String.format(Locale.ROOT, "%s %.2f", e.getKey(), e.getValue() / seconds))
                .collect(Collectors.joining(", "));
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT,
                "%s × %s (%.1f s window): machine %.0f %% of %d cores busy; JVM %.2f cores (%s; GC, JIT and the rest "
                + "%.2f); Redis primaries %.2f cores, replicas %.2f; other processes ≈ %.2f (%.2f of them at "
                + "lowered priority)",
                r.mode().name().toLowerCase(Locale.ROOT), r.topology().name().toLowerCase(Locale.ROOT), seconds,
                100 * r.machineBusy(), r.cores(), r.jvmCpuSeconds() / seconds, groups,
                (r.jvmCpuSeconds() - threads) / seconds, redis, replicas,
                r.machineBusy() * r.cores() - r.jvmCpuSeconds() / seconds - redis - replicas,
                r.machineNice() * r.cores()));
        line.append(String.format(Locale.ROOT, "; decisions skipped by the drivers %,d, failed %,d",
                w.get(FleetTally.Count.SKIPPED), w.get(FleetTally.Count.ERRORS)));
        if (r.mode() == Mode.LOCAL) {
            long answered = w.get(FleetTally.Count.ANSWERED);
            line.append(String.format(Locale.ROOT, "; settles %.1f buckets each, %,d of %,d answered, in %.1f ms on "
                    + "average, longest %.0f ms; reports not sent %,d, unanswered %,d, given up on %,d",
                    r.bucketsPerSettle(), answered, w.get(FleetTally.Count.SETTLES),
                    answered == 0 ? 0 : w.get(FleetTally.Count.SETTLE_NANOS) / 1e6 / answered,
                    w.get(FleetTally.Count.SETTLE_MAX_NANOS) / 1e6, w.get(FleetTally.Count.NOT_SENT),
                    w.get(FleetTally.Count.UNKNOWN), w.get(FleetTally.Count.ABANDONED)));
        }
        else {
            line.append(String.format(Locale.ROOT, "; %.2f decisions per script call", r.decisionsPerCall()));
        }
        line.append("; store calls ").append(counts(StoreMetrics.Outcome.values(), w::storeCalls));
        line.append("; fallbacks by reason ").append(counts(FallbackReason.values(), w::fallbacks));
        if (r.primaryNames().size() > 1) {
            line.append("; primaries in the order of the table: ").append(String.join(" / ", r.primaryNames()));
        }
        if (r.failover()) {
            line.append("; A FAILOVER HAPPENED IN THE WINDOW (a primary too busy to answer the cluster within its node "
                    + "timeout was replaced by its replica): per primary are the primaries at the window's end");
        }
        line.append(String.format(Locale.ROOT, "; live instances counted ≥ %d; whole run: %,d bucket reports sent, "
                + "Redis ran %,d bucket-settles", r.liveInstancesMin(), r.reportsSent(), r.bucketSettlesRedisRan()));
        return line.toString();
    }

    private static <E extends Enum<E>> String counts(E[] values, Function<E, Long> count) {
        String listed = Arrays.stream(values).filter(v -> count.apply(v) > 0)
                .map(v -> v.name().toLowerCase(Locale.ROOT) + " " + String.format(Locale.ROOT, "%,d", count.apply(v)))
                .collect(Collectors.joining(", "));
        return listed.isEmpty() ? "none" : listed;
    }

    /** What one primary sustains, and how many the seeds' fleet then needs. */
    private static String capacity(FleetOptions o, FleetRun r) {
        double demand = r.mode() == Mode.LOCAL
                ? o.instances() / FleetOptions.settleIntervalSeconds()
                        * reportedPerSettle(o, KeyDistribution.of(o.keys(), o.zipfExponent(), o.seed()))
                : o.instances() * o.rate();
        double sustained = r.sustainedPerPrimary();
        return String.format(Locale.ROOT, "%s × %s: one primary at 100 %% of its core sustains **%,.0f %ss/s** "
                + "(%.1f µs of Redis CPU each, everything it did counted); the fleet's %,.0f/s on paper needs %.1f "
                + "such cores, %d primaries at ≤ 100 %%", r.mode().name().toLowerCase(Locale.ROOT),
                r.topology().name().toLowerCase(Locale.ROOT), sustained, r.unitName(), r.cpuMicrosPerUnit(), demand,
                demand / sustained, (long) Math.ceil(demand / sustained));
    }
}

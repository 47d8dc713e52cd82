package dev.ratelimiter.scenarios;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.ratelimiter.scenarios.Gateways.Mode;
import dev.ratelimiter.scenarios.Load.Group;
import dev.ratelimiter.scenarios.Report.Check;
import dev.ratelimiter.scenarios.Report.Result;
import dev.ratelimiter.testsupport.RedisServer;

/**
 * The same honest + noisy load through several limiters (off, SCG's, ours exact, ours local): normal, with Redis
 * paused and with Redis killed, then the closed-loop maximum throughput; and the checks on ours.
 */
final class SideBySideRun {

    private SideBySideRun() {
    }

    /**
     * Every limiter's gateways run at once (idle ones cost little), each limiter's load played in turn; then the
     * closed-loop maximum throughput in interleaved rounds, each limiter's median kept, so that a noisy neighbour on
     * this shared machine weighs on every limiter alike instead of on whichever ran during it.
     */
    static List<SideBySide> run(List<Mode> limiters, Flavour flavour, Path jar, int instances, Limits limits,
            RedisServer redis, Upstream upstream, Path out, Scenarios scenarios, boolean smoke) {
        Map<Mode, Gateways> gateways = new LinkedHashMap<>();
        Map<Mode, Load> loads = new LinkedHashMap<>();
        try {
            for (Mode mode : limiters) {
                Gateways started = Gateways.startFresh(flavour, jar, instances, mode, limits, redis, upstream, out);
                gateways.put(mode, started);
                loads.put(mode, new Load(started.ports()));
            }
            // JVMs that just started keep compiling for a while: let them settle before measuring any of them
            Pause.millis(smoke ? 2_000 : 10_000);
            List<SideBySide> rows = new ArrayList<>();
            for (Mode mode : limiters) {
                redis.command("FLUSHALL");
                SideBySide row = measure(scenarios, limits, redis, mode, loads.get(mode),
                        gateways.get(mode).startupSeconds(), smoke ? 2 : 5);
                rows.add(row);
                System.out.printf(Locale.ROOT, "side by side, %s: %s%n", mode.label, row);
            }
            int rounds = smoke ? 1 : 3;
            Map<Mode, List<Double>> rates = new LinkedHashMap<>();
            for (int round = 0; round < rounds; round++) {
                for (Mode mode : limiters) {
                    double rate = loads.get(mode).saturate("/api/hello", 32, 5_000,
                            Duration.ofSeconds(smoke ? 2 : 5));
                    rates.computeIfAbsent(mode, m -> new ArrayList<>()).add(rate);
                    System.out.printf(Locale.ROOT, "max throughput, round %d, %s: %.0f rps%n", round + 1,
                            mode.label, rate);
                }
            }
            rows.replaceAll(row -> row.withMaxRate(median(rates.get(row.mode()))));
            return rows;
        }
        finally {
            loads.values().forEach(Load::close);
            gateways.values().forEach(Gateways::close);
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /** Normal, Redis paused and Redis killed; the maximum throughput is measured apart, interleaved (see the runner). */
    private static SideBySide measure(Scenarios scenarios, Limits limits, RedisServer redis, Mode mode, Load load,
            double startupSeconds, int faultSeconds) {
        List<Group> groups = List.of(scenarios.honest(), scenarios.noisy(limits.noisyFactor()));
        double offered = groups.stream().mapToDouble(Group::rate).sum();
        String prefix = "side-by-side-" + mode.name().toLowerCase(Locale.ROOT);
        Player player = scenarios.player();
        player.play(prefix + "-warmup", load, groups, Duration.ofSeconds(Math.max(2, limits.seconds() / 3)), null);
        Played normal = player.play(prefix, load, groups, Duration.ofSeconds(limits.seconds()), null);
        Load.Stats honest = normal.run().group("honest");
        if (mode == Mode.OFF) {
            scenarios.storyChecks().limiterOff(honest.percentileMillis(0.5), honest.percentileMillis(0.99));
        }
        Duration fault = Duration.ofSeconds(faultSeconds);
        Played paused = player.play(prefix + "-redis-paused", load, groups, fault, start -> {
            redis.pause();
            Pause.until(start, faultSeconds);
            redis.resume();
        });
        Pause.millis(2_000);
        Played killed = player.play(prefix + "-redis-killed", load, groups, fault, start -> {
            redis.kill();
            Pause.until(start, faultSeconds);
            redis.restart();
        });
        Pause.millis(2_000);
        return new SideBySide(mode, startupSeconds, offered, normal.run().stats.stream()
                .mapToLong(Load.Stats::answered).sum() / normal.seconds(), Double.NaN, honest.percentileMillis(0.5),
                honest.percentileMillis(0.99), honest.errorRate(), normal.run().group("noisy").ok.get()
                        / normal.seconds(), (double) normal.scriptCalls() / Math.max(1, normal.run().sent()),
                (double) normal.storeCommands() / Math.max(1, normal.run().sent()),
                paused.run().group("honest").percentileMillis(0.99), paused.run().group("honest").errorRate(),
                paused.run().group("noisy").ok.get() / paused.seconds(),
                killed.run().group("honest").percentileMillis(0.99), killed.run().group("honest").errorRate(),
                killed.run().group("noisy").ok.get() / killed.seconds(), "normal (" + honest.errors() + "), paused ("
                        + paused.run().group("honest").errors() + "), killed (" + killed.run().group("honest").errors()
                        + ")");
    }

    /** The checks on ours (exact, local) from the rows: errors and latency with Redis down, local's settle rate. */
    static Result checks(List<SideBySide> rows, Limits limits, Path out) {
        List<Check> checks = new ArrayList<>();
        for (SideBySide row : rows) {
            if (row.mode() == Mode.EXACT || row.mode() == Mode.LOCAL) {
                checks.add(new Check(row.mode().label + ": honest error rate, normal / Redis paused / killed",
                        Report.pct(row.honestErrors()) + " / " + Report.pct(row.pausedErrors()) + " / "
                                + Report.pct(row.killedErrors()) + "; " + row.honestErrorsSeen(), "each < 1 %", row.honestErrors() < 0.01
                                && row.pausedErrors() < 0.01 && row.killedErrors() < 0.01));
                checks.add(new Check(row.mode().label + ": honest p99 with Redis paused vs normal",
                        Report.f(row.pausedP99()) + " ms vs " + Report.f(row.p99()) + " ms",
                        "≤ normal + store timeout + 50 ms (target: a few ms)",
                        row.pausedP99() <= row.p99() + Limits.DEFAULT_STORE_TIMEOUT.toMillis() + 50));
            }
        }
        rows.stream().filter(r -> r.mode() == Mode.LOCAL).findFirst().ifPresent(local -> {
            // each instance settles every 100 ms (the default settle interval), whatever the traffic
            double perSecond = local.roundTripsPerRequest() * local.answeredRate();
            double bound = 1.5 * limits.instances() * 10;
            checks.add(new Check("ours, local: store round trips bounded by the settle rate, not the traffic",
                    String.format(Locale.ROOT, "%.1f/s for %.0f requests/s (%.3f per request)", perSecond,
                            local.answeredRate(), local.roundTripsPerRequest()),
                    String.format(Locale.ROOT, "≤ 1.5 × %d instances × 10 settles/s = %.0f/s", limits.instances(),
                            bound), perSecond <= bound));
        });
        Path[] files = new Path[] {out.resolve("side-by-side-exact.csv"), out.resolve("side-by-side-exact.png")};
        // the limiters that ran: the MVC flavour has no SCG limiter
        Result result = new Result("side-by-side", "honest + noisy load through each of "
                + String.join(" / ", rows.stream().map(r -> r.mode().label).toList())
                + "; then with Redis paused and killed", checks, files[0], files[1]);
        Summary.print(result);
        return result;
    }
}

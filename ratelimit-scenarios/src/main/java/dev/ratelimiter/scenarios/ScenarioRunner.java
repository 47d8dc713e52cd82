package dev.ratelimiter.scenarios;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import dev.ratelimiter.scenarios.Gateways.Mode;
import dev.ratelimiter.scenarios.Report.Check;
import dev.ratelimiter.scenarios.Report.Result;
import dev.ratelimiter.scenarios.Scenarios.SideBySide;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;

/**
 * Plays the seeds' scenarios against N sample-gateway processes, one real Redis and a stub upstream, then (or first)
 * the same load through four limiters side by side, and global limits over three regions ({@link RegionsScenario}).
 * Writes a CSV and a PNG per scenario and a {@code summary.md}.
 *
 * <pre>
 * java -jar ratelimit-scenarios/target/ratelimit-scenarios.jar [--smoke] [--scenario=noisy,flood|regions|side-by-side]
 *      [--instances=2] [--seconds=20] [--store-timeout-ms=50] [--out=target/scenarios/&lt;timestamp&gt;]
 * </pre>
 */
public final class ScenarioRunner {

    /** Everything one invocation produced. */
    public record Outcome(Path directory, List<Result> results, List<SideBySide> sideBySide, Path summary) {

        public boolean passed() {
            return results.stream().allMatch(Result::passed);
        }

        public List<String> failures() {
            List<String> failures = new ArrayList<>();
            for (Result result : results) {
                result.checks().stream().filter(c -> !c.pass())
                        .forEach(c -> failures.add(result.scenario() + ": " + c.line().trim()));
            }
            return failures;
        }

        public List<Path> seriesFiles() {
            List<Path> files = new ArrayList<>();
            results.forEach(r -> {
                files.add(r.csv());
                files.add(r.png());
            });
            return files;
        }
    }

    private ScenarioRunner() {
    }

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        Outcome outcome = run(args);
        System.out.println();
        System.out.println(outcome.passed() ? "ALL CHECKS PASS" : "FAILED CHECKS:\n  " + String.join("\n  ",
                outcome.failures()));
        System.out.println("Output: " + outcome.directory().toAbsolutePath());
        System.exit(outcome.passed() ? 0 : 1);
    }

    public static Outcome run(String... args) {
        boolean smoke = Arrays.asList(args).contains("--smoke");
        Limits base = smoke ? Limits.smoke() : Limits.full();
        int instances = Integer.parseInt(option(args, "instances", String.valueOf(base.instances())));
        int seconds = Integer.parseInt(option(args, "seconds", String.valueOf(base.seconds())));
        Limits limits = new Limits(base.quota(), base.honestClients(), base.honestRate(), base.noisyFactor(),
                base.floodFactor(), base.botnetKeys(), base.botnetRate(), base.loginCap(), base.windowLimit(),
                base.window(), seconds, instances, java.time.Duration.ofMillis(Long.parseLong(option(args,
                        "store-timeout-ms", String.valueOf(base.storeTimeout().toMillis())))));
        List<String> selected = new ArrayList<>(Arrays.asList(option(args, "scenario",
                String.join(",", Scenarios.ALL) + "," + RegionsScenario.NAME + ",side-by-side").split(",")));
        selected.replaceAll(String::trim);
        Path out = Path.of(option(args, "out", "target/scenarios/"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"))));
        Path jar = Gateways.locateJar();
        System.out.printf(Locale.ROOT, "Scenario run (%s): %d gateway processes from %s, output in %s%n",
                smoke ? "smoke" : "full", instances, jar, out.toAbsolutePath());

        List<Result> results = new ArrayList<>();
        List<SideBySide> rows = new ArrayList<>();
        List<String> stories = Scenarios.ALL.stream().filter(selected::contains).toList();
        boolean sideBySide = selected.contains("side-by-side");
        try (RedisServer redis = RedisServers.start(); Upstream upstream = new Upstream()) {
            System.out.println("Redis: " + redis.description() + " at " + redis.url() + "; upstream " + upstream.uri());
            Scenarios scenarios = new Scenarios(limits, redis, upstream, out);
            // side by side: the limiter-off run first (the reference for the latency ours adds), ours with the
            // product's default store timeout
            List<Mode> limiters = Arrays.stream(option(args, "limiters", "off,scg,exact,local").split(","))
                    .map(name -> Mode.valueOf(name.trim().toUpperCase(Locale.ROOT))).toList();
            Limits sideBySideLimits = limits.withStoreTimeout(java.time.Duration.ofMillis(Long.parseLong(option(args,
                    "side-by-side-store-timeout-ms", String.valueOf(Limits.DEFAULT_STORE_TIMEOUT.toMillis())))));
            if (sideBySide) {
                rows.addAll(sideBySide(limiters, jar, instances, sideBySideLimits, redis, upstream, out, scenarios,
                        smoke));
            }
            // the stories: ours in exact mode, with the story store timeout (see the README for why it differs)
            if (!stories.isEmpty()) {
                try (Gateways gateways = start(jar, instances, Mode.EXACT, limits, redis, upstream, out);
                        Load load = new Load(gateways.ports())) {
                    // a short warm-up: the first seconds of a fresh JVM would count against the first scenario
                    scenarios.play("warmup", load, List.of(scenarios.honest()),
                            java.time.Duration.ofSeconds(smoke ? 2 : 5), null);
                    for (String story : stories) {
                        if (!redis.isRunning()) {
                            redis.restart();
                        }
                        Result result = scenarios.run(story, load, gateways);
                        print(result);
                        results.add(result);
                    }
                }
            }
            // regions: gateways, Redis and a broker of its own, after the stories' gateways are gone
            if (selected.contains(RegionsScenario.NAME)) {
                Result result = new RegionsScenario(limits.seconds()).run(jar, upstream, limits.storeTimeout(), out);
                print(result);
                results.add(result);
            }
            if (sideBySide) {
                results.add(sideBySideChecks(rows, limits, out));
            }
        }
        Path summary = writeSummary(out, smoke, limits, results, rows);
        return new Outcome(out, results, rows, summary);
    }

    /**
     * Every limiter's gateways run at once (idle ones cost little), each limiter's load played in turn; then the
     * closed-loop maximum throughput in interleaved rounds, each limiter's median kept, so that a noisy neighbour on
     * this shared machine weighs on every limiter alike instead of on whichever ran during it.
     */
    private static List<SideBySide> sideBySide(List<Mode> limiters, Path jar, int instances, Limits limits,
            RedisServer redis, Upstream upstream, Path out, Scenarios scenarios, boolean smoke) {
        Map<Mode, Gateways> gateways = new LinkedHashMap<>();
        Map<Mode, Load> loads = new LinkedHashMap<>();
        try {
            for (Mode mode : limiters) {
                Gateways started = start(jar, instances, mode, limits, redis, upstream, out);
                gateways.put(mode, started);
                loads.put(mode, new Load(started.ports()));
            }
            // JVMs that just started keep compiling for a while: let them settle before measuring any of them
            Gateways.sleep(smoke ? 2_000 : 10_000);
            List<SideBySide> rows = new ArrayList<>();
            for (Mode mode : limiters) {
                redis.command("FLUSHALL");
                SideBySide row = scenarios.sideBySide(mode, loads.get(mode), gateways.get(mode).startupSeconds(),
                        smoke ? 2 : 5);
                rows.add(row);
                System.out.printf(Locale.ROOT, "side by side, %s: %s%n", mode.label, row);
            }
            int rounds = smoke ? 1 : 3;
            Map<Mode, List<Double>> rates = new LinkedHashMap<>();
            for (int round = 0; round < rounds; round++) {
                for (Mode mode : limiters) {
                    double rate = loads.get(mode).saturate("/api/hello", 32, 5_000,
                            java.time.Duration.ofSeconds(smoke ? 2 : 5));
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

    private static Gateways start(Path jar, int instances, Mode mode, Limits limits, RedisServer redis,
            Upstream upstream, Path out) {
        if (!redis.isRunning()) {
            redis.restart();
        }
        redis.command("FLUSHALL");
        Gateways gateways = new Gateways(jar, instances, mode, limits, redis.url(), upstream.uri(),
                out.resolve("logs"));
        System.out.printf(Locale.ROOT, "%d gateways (%s, store timeout %d ms) ready in %.1f s%n", instances,
                mode.label, limits.storeTimeout().toMillis(), gateways.startupSeconds());
        return gateways;
    }

    private static Result sideBySideChecks(List<SideBySide> rows, Limits limits, Path out) {
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
        Result result = new Result("side-by-side", "honest + noisy load through limiter off, SCG's RequestRateLimiter, "
                + "ours exact, ours local; then with Redis paused and killed", checks, files[0], files[1]);
        print(result);
        return result;
    }

    private static void print(Result result) {
        System.out.println();
        System.out.println("== " + result.scenario() + ": " + result.description());
        result.checks().forEach(c -> System.out.println(c.line()));
        System.out.println("  series: " + result.csv() + ", " + result.png());
    }

    private static Path writeSummary(Path out, boolean smoke, Limits limits, List<Result> results,
            List<SideBySide> rows) {
        StringBuilder md = new StringBuilder("# Scenario run\n\n");
        md.append(String.format(Locale.ROOT, "Mode: %s. %d gateway processes; quota %d/s per client (burst %d); %d "
                + "honest clients at %d rps in all; %d s per scenario.%n%n", smoke ? "smoke" : "full",
                limits.instances(), limits.quota(), limits.quota(), limits.honestClients(), limits.honestRate(),
                limits.seconds()));
        if (!rows.isEmpty()) {
            md.append("## Side by side\n\n");
            // Said in the report itself: its throughput column has been read as a deployment's figure before.
            md.append("These gateways run with -XX:TieredStopAtLevel=1 -XX:+UseSerialGC (several at once on this "
                    + "machine): the stories' behaviour, not a deployment's speed. For throughput as users deploy, "
                    + "run ratelimit-benchmarks' SideBySide (fat jar, default JIT and GC, one gateway at a time).\n\n");
            md.append("| limiter | start-up (s) | offered rps | answered rps | max rps (32 in flight, median of interleaved rounds) | honest p50 (ms) "
                    + "| honest p99 (ms) | honest errors | noisy admitted rps (quota " + limits.quota()
                    + ") | store round trips / request | Redis commands / request | Redis paused: p99 / errors / noisy rps | Redis killed: p99 / errors "
                    + "/ noisy rps |\n");
            md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
            for (SideBySide r : rows) {
                md.append(String.format(Locale.ROOT,
                        "| %s | %.1f | %.0f | %.0f | %.0f | %.2f | %.2f | %s | %.1f | %.3f | %.2f | %.1f ms / %s / %.1f "
                                + "| %.1f ms / %s / %.1f |%n", r.mode().label, r.startupSeconds(), r.offered(),
                        r.answeredRate(), r.maxRate(), r.p50(), r.p99(), Report.pct(r.honestErrors()),
                        r.noisyAdmittedRate(), r.roundTripsPerRequest(), r.commandsPerRequest(), r.pausedP99(), Report.pct(r.pausedErrors()),
                        r.pausedNoisyRate(), r.killedP99(), Report.pct(r.killedErrors()), r.killedNoisyRate()));
            }
            md.append('\n');
        }
        md.append("## Scenarios\n\n");
        for (Result result : results) {
            md.append("### ").append(result.scenario()).append(result.passed() ? " — PASS" : " — FAIL").append("\n\n")
                    .append(result.description()).append("\n\n");
            md.append("| check | measured | bound | result |\n| --- | --- | --- | --- |\n");
            for (Check c : result.checks()) {
                md.append("| ").append(c.requirement()).append(" | ").append(c.measured()).append(" | ")
                        .append(c.bound()).append(" | ").append(c.pass() ? "PASS" : "FAIL").append(" |\n");
            }
            md.append("\nSeries: `").append(result.csv().getFileName()).append("`, `")
                    .append(result.png().getFileName()).append("`\n\n");
        }
        try {
            Files.createDirectories(out);
            Path summary = out.resolve("summary.md");
            Files.writeString(summary, md);
            System.out.println();
            System.out.println(md);
            return summary;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static String option(String[] args, String name, String fallback) {
        for (String arg : args) {
            if (arg.startsWith("--" + name + "=")) {
                return arg.substring(name.length() + 3);
            }
        }
        return fallback;
    }
}

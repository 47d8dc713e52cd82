package dev.ratelimiter.scenarios;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import dev.ratelimiter.scenarios.Gateways.Mode;
import dev.ratelimiter.scenarios.Report.Result;
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
        Path jar = GatewayJar.locate();
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
                rows.addAll(SideBySideRun.run(limiters, jar, instances, sideBySideLimits, redis, upstream, out, scenarios,
                        smoke));
            }
            // the stories: ours in exact mode, with the story store timeout (see the README for why it differs)
            if (!stories.isEmpty()) {
                try (Gateways gateways = Gateways.startFresh(jar, instances, Mode.EXACT, limits, redis, upstream, out);
                        Load load = new Load(gateways.ports())) {
                    // a short warm-up: the first seconds of a fresh JVM would count against the first scenario
                    scenarios.player().play("warmup", load, List.of(scenarios.honest()),
                            java.time.Duration.ofSeconds(smoke ? 2 : 5), null);
                    for (String story : stories) {
                        if (!redis.isRunning()) {
                            redis.restart();
                        }
                        Result result = scenarios.run(story, load, gateways);
                        Summary.print(result);
                        results.add(result);
                    }
                }
            }
            // regions: gateways, Redis and a broker of its own, after the stories' gateways are gone
            if (selected.contains(RegionsScenario.NAME)) {
                Result result = new RegionsScenario(limits.seconds()).run(jar, upstream, limits.storeTimeout(), out);
                Summary.print(result);
                results.add(result);
            }
            if (sideBySide) {
                results.add(SideBySideRun.checks(rows, limits, out));
            }
        }
        Path summary = Summary.write(out, smoke, limits, results, rows);
        return new Outcome(out, results, rows, summary);
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

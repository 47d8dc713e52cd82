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
 * Plays the seeds' scenarios against N sample gateway processes (WebFlux's {@code sample-gateway} or, with
 * {@code --flavour=mvc}, its Server MVC twin {@code sample-gateway-mvc}), one real Redis and a stub upstream, then (or
 * first) the same load through four limiters side by side, and global limits over three regions
 * ({@link RegionsScenario}). Writes a CSV and a PNG per scenario and a {@code summary.md}. The options: {@link #USAGE}.
 */
public final class ScenarioRunner {

    /** Printed for {@code --help} and with a refused command line. */
    static final String USAGE = """
            java -jar ratelimit-scenarios/target/ratelimit-scenarios.jar [options]
              --smoke                     tiny scale, 3 s per scenario
              --flavour=webflux|mvc       the gateway to drive: sample-gateway (WebFlux, the default) or
                                          sample-gateway-mvc (Server MVC), both given the same arguments; on mvc
                                          the side by side runs off,exact,local (SCG's RequestRateLimiter is WebFlux
                                          only) and regions is refused (no Kafka client in the MVC starter);
                                          abuse-score runs on mvc when named (not by default there)
              --scenario=<list>           baseline, noisy, flood, botnet, slow, window-edge, store-down, regions,
                                          llm-tokens (webflux only), abuse-score, side-by-side (default: all the flavour runs)
              --limiters=<list>           side by side: off, scg, exact, local (default: all the flavour runs)
              --instances=2  --seconds=20  --store-timeout-ms=100  --side-by-side-store-timeout-ms=5
              --out=<dir>                 default target/scenarios/<timestamp>
            The jar: <module>/target or ../<module>/target, or -Dscenarios.gateway.jar=<path>
            (-Dscenarios.gateway-mvc.jar=<path> for mvc).""";

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
        if (Arrays.asList(args).contains("--help")) {
            System.out.println(USAGE);
            return;
        }
        Outcome outcome;
        try {
            outcome = run(args);
        }
        catch (IllegalArgumentException ex) {
            System.err.println(ex.getMessage());
            System.err.println();
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
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
        Flavour flavour = Flavour.of(option(args, "flavour", "webflux"));
        List<String> selected = new ArrayList<>(Arrays.asList(option(args, "scenario", String.join(",",
                Scenarios.ALL) + (flavour.runsRegionsByDefault() ? "," + RegionsScenario.NAME + ","
                        + LlmTokensScenario.NAME + "," + AbuseScoreScenario.NAME : "") + ",side-by-side")
                .split(",")));
        selected.replaceAll(String::trim);
        List<Mode> limiters = Arrays.stream(option(args, "limiters", String.join(",",
                flavour.defaultLimiters().stream().map(m -> m.name().toLowerCase(Locale.ROOT)).toList())).split(","))
                .map(name -> Mode.valueOf(name.trim().toUpperCase(Locale.ROOT))).toList();
        refuseWhatTheFlavourCannotRun(flavour, selected, limiters);
        Path out = Path.of(option(args, "out", "target/scenarios/"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"))));
        Path jar = GatewayJar.locate(flavour);
        System.out.printf(Locale.ROOT, "Scenario run (%s, %s): %d gateway processes from %s, output in %s%n",
                smoke ? "smoke" : "full", flavour.label, instances, jar, out.toAbsolutePath());

        List<Result> results = new ArrayList<>();
        List<SideBySide> rows = new ArrayList<>();
        List<String> stories = Scenarios.ALL.stream().filter(selected::contains).toList();
        boolean sideBySide = selected.contains("side-by-side");
        try (RedisServer redis = RedisServers.start(); Upstream upstream = new Upstream()) {
            System.out.println("Redis: " + redis.description() + " at " + redis.url() + "; upstream " + upstream.uri());
            Scenarios scenarios = new Scenarios(limits, redis, upstream, out);
            // side by side: the limiter-off run first (the reference for the latency ours adds), ours with the
            // product's default store timeout
            Limits sideBySideLimits = limits.withStoreTimeout(java.time.Duration.ofMillis(Long.parseLong(option(args,
                    "side-by-side-store-timeout-ms", String.valueOf(Limits.DEFAULT_STORE_TIMEOUT.toMillis())))));
            if (sideBySide) {
                rows.addAll(SideBySideRun.run(limiters, flavour, jar, instances, sideBySideLimits, redis, upstream,
                        out, scenarios, smoke));
            }
            // the stories: ours in exact mode, with the story store timeout (see the README for why it differs)
            boolean llmTokens = selected.contains(LlmTokensScenario.NAME);
            if (!stories.isEmpty() || llmTokens) {
                try (Gateways gateways = Gateways.startFresh(flavour, jar, instances, Mode.EXACT, limits, redis,
                        upstream, out);
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
                    if (llmTokens) {
                        // its own keys and rule (the sample's llm-tokens): nothing the stories spent counts here
                        Result result = LlmTokensScenario.run(gateways.ports(), limits.seconds(), out);
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
            // abuse scores: a gateway of its own, after the others are gone
            if (selected.contains(AbuseScoreScenario.NAME)) {
                Result result = new AbuseScoreScenario().run(jar, redis, upstream, out);
                Summary.print(result);
                results.add(result);
            }
            if (sideBySide) {
                results.add(SideBySideRun.checks(rows, limits, out));
            }
        }
        Path summary = Summary.write(out, smoke, flavour, jar, limits, results, rows);
        return new Outcome(out, results, rows, summary);
    }

    /**
     * Fails, before anything starts, on a scenario or limiter the flavour cannot run, naming it: played anyway it
     * would fail in a way that reads like the limiter's fault.
     */
    private static void refuseWhatTheFlavourCannotRun(Flavour flavour, List<String> selected, List<Mode> limiters) {
        List<String> refusals = new ArrayList<>();
        selected.forEach(scenario -> flavour.unsupported(scenario).ifPresent(refusals::add));
        if (selected.contains("side-by-side")) {
            limiters.forEach(mode -> flavour.unsupported(mode).ifPresent(refusals::add));
        }
        if (!refusals.isEmpty()) {
            throw new IllegalArgumentException("--flavour=" + flavour.name().toLowerCase(Locale.ROOT) + " cannot run "
                    + "what was asked: " + String.join("; ", refusals));
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

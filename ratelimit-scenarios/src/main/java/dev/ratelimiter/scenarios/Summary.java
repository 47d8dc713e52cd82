package dev.ratelimiter.scenarios;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import dev.ratelimiter.scenarios.Report.Check;
import dev.ratelimiter.scenarios.Report.Result;

/** What a run tells a person: each scenario's checks as it ends, and a {@code summary.md} of the whole run. */
final class Summary {

    private Summary() {
    }

    /** One scenario's checks, as the run goes. */
    static void print(Result result) {
        System.out.println();
        System.out.println("== " + result.scenario() + ": " + result.description());
        result.checks().forEach(c -> System.out.println(c.line()));
        System.out.println("  series: " + result.csv() + ", " + result.png());
    }

    /** {@code summary.md} in {@code out}, also printed: the side-by-side table and every scenario's checks. */
    static Path write(Path out, boolean smoke, Flavour flavour, Path jar, Limits limits, List<Result> results,
            List<SideBySide> rows) {
        StringBuilder md = new StringBuilder("# Scenario run\n\n");
        md.append(String.format(Locale.ROOT, "Mode: %s. Gateway: %s (`%s`). %d gateway processes; quota %d/s per "
                + "client (burst %d); %d honest clients at %d rps in all; %d s per scenario.%n%n",
                smoke ? "smoke" : "full", flavour.label, jar.getFileName(), limits.instances(), limits.quota(),
                limits.quota(), limits.honestClients(), limits.honestRate(), limits.seconds()));
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
}

package dev.ratelimiter.benchmarks.sidebyside;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

import dev.ratelimiter.benchmarks.sidebyside.BenchGateway.Case;
import dev.ratelimiter.benchmarks.sidebyside.SideBySide.Measured;

/** The side by side as a markdown table: every round's figure, and ratios to "limiter off" of the same round. */
final class SideBySideReport {

    private SideBySideReport() {
    }

    static String markdown(List<Measured> results, String setup) {
        int rounds = results.stream().mapToInt(Measured::round).max().orElse(0);
        StringBuilder out = new StringBuilder("## Side by side\n\n").append(setup).append("\n\n");
        out.append("| case | allow req/s | vs off | allow p50 / p99 ms | deny req/s | vs off | script calls / request "
                + "| Redis commands / request | Redis CPU µs / request | gateway CPU µs / request | fallback decisions |\n");
        out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (Case limiter : Case.values()) {
            List<Measured> mine = results.stream().filter(m -> m.limiter() == limiter).toList();
            if (mine.isEmpty()) {
                continue;
            }
            out.append("| ").append(limiter.label)
                    .append(" | ").append(each(mine, m -> fmt("%.0f", m.allow().requestsPerSecond())))
                    .append(" | ").append(each(mine, m -> ratio(results, m, true)))
                    .append(" | ").append(each(mine, m -> fmt("%.2f / %.2f", m.allow().p50Millis(),
                            m.allow().p99Millis())))
                    .append(" | ").append(each(mine, m -> fmt("%.0f", m.deny().requestsPerSecond())))
                    .append(" | ").append(each(mine, m -> ratio(results, m, false)))
                    .append(" | ").append(each(mine, m -> fmt("%.3f", perRequest(m.allowRedis().scriptCalls(),
                            m.allow()))))
                    .append(" | ").append(each(mine, m -> fmt("%.2f", perRequest(m.allowRedis().commands(),
                            m.allow()))))
                    .append(" | ").append(each(mine, m -> fmt("%.0f", perRequest(m.allowRedis().cpuMicros(),
                            m.allow()))))
                    .append(" | ").append(each(mine, m -> m.allowGatewayCpuMicros() < 0 ? "-"
                            : fmt("%.0f", perRequest(m.allowGatewayCpuMicros(), m.allow()))))
                    .append(" | ").append(each(mine, m -> limiter.ours()
                            ? fmt("%.2f %%", 100.0 * m.fallbackDecisions() / Math.max(1, m.allow().requests()))
                            : "-"))
                    .append(" |\n");
        }
        out.append("\nEach cell: round 1 / round 2 / …; \"vs off\": this case's throughput ÷ limiter off's in the same "
                + "round, of the same gateway (the MVC cases: MVC limiter off; in brackets, WebFlux limiter off's). "
                + "Refused path: requests per second answered (429s) for one client at 10/s. Script calls and "
                + "commands: Redis's own INFO commandstats over the allowed run, per request (commands inside scripts "
                + "included); Redis CPU: its process's user + system time over the allowed run, per request (Redis "
                + "runs on the gateway's machine here: its CPU is the gateway's loss); gateway CPU: the gateway process's user + system "
                + "time over the allowed run, per request (JIT included, whatever is left of it). Fallback decisions: decisions of "
                + "ours made without Redis (timeout or breaker) on the allowed run, as a share of requests.\n");
        paced(results, out);
        if (rounds > 0) {
            out.append("\nNon-200 answers and errors on the allowed path: ").append(results.stream()
                    .map(m -> m.limiter().id + " r" + m.round() + " " + m.allow().nonOk() + "/" + m.allow().errors())
                    .collect(Collectors.joining(", "))).append(".\n");
            out.append("Requests unanswered or failed on the refused path (a request unanswered for ")
                    .append(ClosedLoop.RESPONSE_TIMEOUT.toSeconds()).append(" s counts): ").append(results.stream()
                    .map(m -> m.limiter().id + " r" + m.round() + " " + m.deny().errors())
                    .collect(Collectors.joining(", "))).append(".\n");
        }
        return out.toString();
    }

    private static String each(List<Measured> mine, java.util.function.Function<Measured, String> cell) {
        return mine.stream().map(cell).collect(Collectors.joining(" / "));
    }

    private static String ratio(List<Measured> results, Measured m, boolean allow) {
        Optional<Measured> off = offOf(results, m);
        if (off.isEmpty()) {
            return "-";
        }
        // both paths against limiter off's allowed throughput: what the gateway does without any limiter
        double base = off.get().allow().requestsPerSecond();
        double mine = allow ? m.allow().requestsPerSecond() : m.deny().requestsPerSecond();
        Optional<Measured> webFluxOff = m.limiter().mvc ? offOf(results, Case.OFF, m.round()) : Optional.empty();
        // an MVC case against the WebFlux gateway without limiter too: what choosing the flavour costs
        return fmt("%.2f", mine / base) + webFluxOff.map(o -> fmt(" (%.2f of WebFlux off)",
                mine / o.allow().requestsPerSecond())).orElse("");
    }

    /** The allowed path at fixed shares of limiter off's saturating rate: one table per share. */
    private static void paced(List<Measured> results, StringBuilder out) {
        List<Double> shares = results.stream().flatMap(m -> m.paced().stream()).map(SideBySide.Paced::share)
                .distinct().sorted().toList();
        for (double share : shares) {
            out.append("\n### Allowed path at ").append(Math.round(share * 100))
                    .append(" % of limiter off's saturating rate\n\n")
                    .append("| case | req/s | machine CPU | p50 / p99 ms | added p99 ms | fallback decisions |\n")
                    .append("| --- | ---: | ---: | ---: | ---: | ---: |\n");
            for (Case limiter : Case.values()) {
                List<Measured> mine = results.stream().filter(m -> m.limiter() == limiter && m.at(share) != null)
                        .toList();
                if (mine.isEmpty()) {
                    continue;
                }
                out.append("| ").append(limiter.label)
                        .append(" | ").append(each(mine, m -> fmt("%.0f", m.at(share).load().requestsPerSecond())
                                + (m.at(share).reached() ? "" : fmt(" (of %.0f: not reached)", m.at(share).target()))))
                        .append(" | ").append(each(mine, m -> fmt("%.0f %%", m.at(share).machineCpu() * 100)))
                        .append(" | ").append(each(mine, m -> fmt("%.2f / %.2f", m.at(share).load().p50Millis(),
                                m.at(share).load().p99Millis())))
                        .append(" | ").append(each(mine, m -> addedP99(results, m, share)))
                        .append(" | ").append(each(mine, m -> limiter.ours()
                                ? fmt("%.3f %%", 100.0 * m.at(share).fallbackDecisions()
                                        / Math.max(1, m.at(share).load().requests()))
                                : "-"))
                        .append(" |\n");
            }
        }
        if (!shares.isEmpty()) {
            out.append("\nPaced: each connection waits a random pause (exponential) between requests, so that the "
                    + "rate is a share of what limiter off carried in the same round. Machine CPU: all cores, all "
                    + "processes (gateway, Redis, upstream, load), from /proc/stat. Added p99: this case's p99 minus "
                    + "limiter off's at the same rate in the same round.\n");
        }
    }

    private static String addedP99(List<Measured> results, Measured m, double share) {
        Optional<Measured> off = offOf(results, m);
        if (off.isEmpty() || off.get().at(share) == null || !m.at(share).reached()) {
            return "-";
        }
        return fmt("%+.2f", m.at(share).load().p99Millis() - off.get().at(share).load().p99Millis());
    }

    /** Limiter off of the same gateway (WebFlux or MVC) in the same round. */
    private static Optional<Measured> offOf(List<Measured> results, Measured m) {
        return offOf(results, m.limiter().baseline(), m.round());
    }

    private static Optional<Measured> offOf(List<Measured> results, Case off, int round) {
        return results.stream().filter(o -> o.limiter() == off && o.round() == round).findFirst();
    }

    private static double perRequest(long count, LoadResult load) {
        return (double) count / Math.max(1, load.requests());
    }

    private static String fmt(String pattern, Object... values) {
        return String.format(Locale.ROOT, pattern, values);
    }
}

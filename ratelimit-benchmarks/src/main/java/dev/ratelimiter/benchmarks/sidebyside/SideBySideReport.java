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
        out.append("| case | allow req/s | vs off | allow p50 / p99 ms | deny req/s | vs off | added p99 at half load "
                + "(ms) | script calls / request | Redis commands / request | fallback decisions |\n");
        out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
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
                    .append(" | ").append(each(mine, m -> addedP99(results, m)))
                    .append(" | ").append(each(mine, m -> fmt("%.3f", perRequest(m.allowRedis().scriptCalls(),
                            m.allow()))))
                    .append(" | ").append(each(mine, m -> fmt("%.2f", perRequest(m.allowRedis().commands(),
                            m.allow()))))
                    .append(" | ").append(each(mine, m -> limiter == Case.EXACT || limiter == Case.LOCAL
                            ? fmt("%.2f %%", 100.0 * m.fallbackDecisions() / Math.max(1, m.allow().requests()))
                            : "-"))
                    .append(" |\n");
        }
        out.append("\nEach cell: round 1 / round 2 / …; \"vs off\": this case's throughput ÷ limiter off's in the same "
                + "round. Refused path: requests per second answered (429s) for one client at 10/s. Added p99: this "
                + "case's p99 minus limiter off's, both at half of limiter off's saturating rate. Script calls and "
                + "commands: Redis's own INFO commandstats over the allowed run, per request (commands inside scripts "
                + "included). Fallback decisions: decisions of ours made without Redis (timeout or breaker) on the "
                + "allowed run, as a share of requests.\n");
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
        return fmt("%.2f", mine / base);
    }

    private static String addedP99(List<Measured> results, Measured m) {
        Optional<Measured> off = offOf(results, m);
        if (off.isEmpty() || m.halfLoad() == null || off.get().halfLoad() == null) {
            return "-";
        }
        return fmt("%+.2f", m.halfLoad().p99Millis() - off.get().halfLoad().p99Millis());
    }

    private static Optional<Measured> offOf(List<Measured> results, Measured m) {
        return results.stream().filter(o -> o.limiter() == Case.OFF && o.round() == m.round()).findFirst();
    }

    private static double perRequest(long count, LoadResult load) {
        return (double) count / Math.max(1, load.requests());
    }

    private static String fmt(String pattern, Object... values) {
        return String.format(Locale.ROOT, pattern, values);
    }
}

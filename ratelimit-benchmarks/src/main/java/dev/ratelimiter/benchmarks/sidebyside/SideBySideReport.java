package dev.ratelimiter.benchmarks.sidebyside;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

import dev.ratelimiter.benchmarks.sidebyside.BenchGateway.Case;
import dev.ratelimiter.benchmarks.sidebyside.SideBySide.Cost;
import dev.ratelimiter.benchmarks.sidebyside.SideBySide.Measured;

/**
 * The side by side as markdown: per layout, a table of the allowed path with what each request cost, one of the
 * refused path's costs, and the paced runs; every round's figure, and ratios and differences to "limiter off" of the
 * same round and layout.
 */
final class SideBySideReport {

    private SideBySideReport() {
    }

    static String markdown(List<Measured> results, String setup) {
        StringBuilder out = new StringBuilder("## Side by side\n\n").append(setup).append("\n");
        List<Layout> layouts = results.stream().map(Measured::layout).distinct().sorted().toList();
        for (Layout layout : layouts) {
            List<Measured> here = results.stream().filter(m -> m.layout() == layout).toList();
            out.append("\n### Layout ").append(layout.id).append(": ").append(layout.description).append("\n\n");
            allowed(here, out);
            refused(here, out);
            paced(here, out);
        }
        out.append("\nEach cell: round 1 / round 2 / …, in the order the rounds ran (they interleave the layouts: "
                + "round 1 shared, round 1 pinned, round 2 shared, …). \"vs off\": this case's throughput ÷ limiter "
                + "off's in the same round and layout, of the same gateway (the MVC cases: MVC limiter off; in "
                + "brackets, WebFlux limiter off's); the refused path's too is against limiter off's allowed path. "
                + "Refused path: one client at " + BenchGateway.DENY_RATE + "/s, requests answered (429s) per second. "
                + "Gateway CPU: the gateway JVM's user + system time, all its threads (/proc/<pid>/stat), over the "
                + "measured run, per request answered; limiter's: the same minus limiter off's of the same gateway, "
                + "round and layout (on the refused path, minus off's forwarding the same requests: below zero, a "
                + "refusal costs less than a proxied request). Redis CPU: its process's user + system time over the "
                + "run (INFO cpu), per request (on one machine, Redis's CPU is taken from the gateway's cores). Lua "
                + "µs / call: Redis's time inside EVAL/EVALSHA per call over the run (INFO commandstats, commands "
                + "within the script included). Decisions / script call: requests answered per script call, the "
                + "batch a call carries (script calls / request is its inverse); \"-\" without script calls. The "
                + "CPU of wrk and nginx is not counted. Fallback decisions: decisions of ours made without Redis "
                + "(timeout or breaker) on the allowed run, as a share of requests.\n");
        if (!results.isEmpty()) {
            out.append("\nNon-200 answers and errors on the allowed path: ").append(results.stream()
                    .map(m -> tag(m) + " " + m.allow().nonOk() + "/" + m.allow().errors())
                    .collect(Collectors.joining(", "))).append(".\n");
            out.append("Requests unanswered or failed on the refused path (a request unanswered for ")
                    .append(ClosedLoop.RESPONSE_TIMEOUT.toSeconds()).append(" s counts): ").append(results.stream()
                    .map(m -> tag(m) + " " + m.deny().errors())
                    .collect(Collectors.joining(", "))).append(".\n");
        }
        return out.toString();
    }

    /** The allowed path: rates, ratios and what a request cost. */
    private static void allowed(List<Measured> results, StringBuilder out) {
        out.append("| case | allow req/s | vs off | p99 ms | deny vs off | gateway CPU µs / req | limiter's gateway "
                + "CPU µs / req | Redis CPU µs / req | Lua µs / call | decisions / script call | fallback decisions "
                + "|\n");
        out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (Case limiter : Case.values()) {
            List<Measured> mine = results.stream().filter(m -> m.limiter() == limiter).toList();
            if (mine.isEmpty()) {
                continue;
            }
            out.append("| ").append(limiter.label)
                    .append(" | ").append(each(mine, m -> fmt("%.0f", m.allow().requestsPerSecond())))
                    .append(" | ").append(each(mine, m -> ratio(results, m, true)))
                    .append(" | ").append(each(mine, m -> fmt("%.2f", m.allow().p99Millis())))
                    .append(" | ").append(each(mine, m -> ratio(results, m, false)))
                    .append(" | ").append(each(mine, m -> number("%.1f", m.allowCost().gatewayMicrosPerRequest())))
                    .append(" | ").append(each(mine, m -> limiterCost(results, m, Measured::allowCost)))
                    .append(" | ").append(each(mine, m -> number("%.1f", m.allowCost().redisMicrosPerRequest())))
                    .append(" | ").append(each(mine, m -> number("%.2f", m.allowCost().luaMicrosPerCall())))
                    .append(" | ").append(each(mine, m -> number("%.1f", m.allowCost().decisionsPerScriptCall())))
                    .append(" | ").append(each(mine, m -> limiter.ours()
                            ? fmt("%.2f %%", 100.0 * m.fallbackDecisions() / Math.max(1, m.allow().requests()))
                            : "-"))
                    .append(" |\n");
        }
    }

    /** The refused path: what a request answered 429 (for limiter off: forwarded) cost. */
    private static void refused(List<Measured> results, StringBuilder out) {
        out.append("\nRefused path (limiter off forwards it):\n\n")
                .append("| case | deny req/s | gateway CPU µs / req | limiter's gateway CPU µs / req "
                        + "| Redis CPU µs / req | Lua µs / call | decisions / script call |\n")
                .append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (Case limiter : Case.values()) {
            List<Measured> mine = results.stream().filter(m -> m.limiter() == limiter).toList();
            if (mine.isEmpty()) {
                continue;
            }
            out.append("| ").append(limiter.label)
                    .append(" | ").append(each(mine, m -> fmt("%.0f", m.deny().requestsPerSecond())))
                    .append(" | ").append(each(mine, m -> number("%.1f", m.denyCost().gatewayMicrosPerRequest())))
                    .append(" | ").append(each(mine, m -> limiterCost(results, m, Measured::denyCost)))
                    .append(" | ").append(each(mine, m -> number("%.1f", m.denyCost().redisMicrosPerRequest())))
                    .append(" | ").append(each(mine, m -> number("%.2f", m.denyCost().luaMicrosPerCall())))
                    .append(" | ").append(each(mine, m -> number("%.1f", m.denyCost().decisionsPerScriptCall())))
                    .append(" |\n");
        }
    }

    private static String each(List<Measured> mine, Function<Measured, String> cell) {
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
        Optional<Measured> webFluxOff = m.limiter().mvc ? offOf(results, Case.OFF, m.round(), m.layout())
                : Optional.empty();
        // an MVC case against the WebFlux gateway without limiter too: what choosing the flavour costs
        return fmt("%.2f", mine / base) + webFluxOff.map(o -> fmt(" (%.2f of WebFlux off)",
                mine / o.allow().requestsPerSecond())).orElse("");
    }

    /** The gateway's CPU per request minus limiter off's on the same path, same gateway, round and layout. */
    private static String limiterCost(List<Measured> results, Measured m, Function<Measured, Cost> path) {
        Optional<Measured> off = offOf(results, m);
        if (off.isEmpty() || off.get() == m) {
            return "-";
        }
        ToDoubleFunction<Measured> perRequest = measured -> path.apply(measured).gatewayMicrosPerRequest();
        return number("%+.1f", perRequest.applyAsDouble(m) - perRequest.applyAsDouble(off.get()));
    }

    /** The allowed path at fixed shares of limiter off's saturating rate: one table per share. */
    private static void paced(List<Measured> results, StringBuilder out) {
        List<Double> shares = results.stream().flatMap(m -> m.paced().stream()).map(SideBySide.Paced::share)
                .distinct().sorted().toList();
        for (double share : shares) {
            out.append("\n#### Allowed path at ").append(Math.round(share * 100))
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
                    + "rate is a share of what limiter off carried in the same round and layout. Machine CPU: all "
                    + "cores, all processes (gateway, Redis, upstream, load), from /proc/stat. Added p99: this case's "
                    + "p99 minus limiter off's at the same rate in the same round and layout.\n");
        }
    }

    private static String addedP99(List<Measured> results, Measured m, double share) {
        Optional<Measured> off = offOf(results, m);
        if (off.isEmpty() || off.get().at(share) == null || !m.at(share).reached()) {
            return "-";
        }
        return fmt("%+.2f", m.at(share).load().p99Millis() - off.get().at(share).load().p99Millis());
    }

    /** Limiter off of the same gateway (WebFlux or MVC) in the same round and layout. */
    private static Optional<Measured> offOf(List<Measured> results, Measured m) {
        return offOf(results, m.limiter().baseline(), m.round(), m.layout());
    }

    private static Optional<Measured> offOf(List<Measured> results, Case off, int round, Layout layout) {
        return results.stream().filter(o -> o.limiter() == off && o.round() == round && o.layout() == layout)
                .findFirst();
    }

    private static String tag(Measured m) {
        return m.limiter().id + " r" + m.round() + " " + m.layout().id;
    }

    /** A figure, or "-" where there is none ({@code NaN}: nothing to divide by, or unreadable). */
    private static String number(String pattern, double value) {
        return Double.isNaN(value) || Double.isInfinite(value) ? "-" : fmt(pattern, value);
    }

    private static String fmt(String pattern, Object... values) {
        return String.format(Locale.ROOT, pattern, values);
    }
}

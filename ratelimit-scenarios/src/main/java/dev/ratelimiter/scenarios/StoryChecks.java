package dev.ratelimiter.scenarios;

import java.util.List;
import java.util.Locale;

import dev.ratelimiter.scenarios.Report.Check;

/**
 * The checks several stories share, against the references measured earlier in the run: the honest latency with the
 * limiter off (side by side) and in the baseline story.
 */
final class StoryChecks {

    private final Upstream upstream;
    /** Honest p50 and p99 with the limiter off, when measured (side by side): what limiting adds is measured on it. */
    private double offP50 = Double.NaN;
    private double offP99 = Double.NaN;
    private double baselineP99 = Double.NaN;

    StoryChecks(Upstream upstream) {
        this.upstream = upstream;
    }

    /** The honest latency with the limiter off, the reference of {@link #latencyAdded}. */
    void limiterOff(double p50, double p99) {
        offP50 = p50;
        offP99 = p99;
    }

    /** The honest p99 of the baseline story, the reference of {@link #honestNotSlowed}. */
    void baseline(double p99) {
        baselineP99 = p99;
    }

    /** The honest clients almost never refused or failed: under 1 %. */
    Check honestErrors(Load.Stats honest) {
        return new Check("honest error rate", Report.pct(honest.errorRate()) + " of " + honest.answered() + " (429: "
                + honest.refused.get() + ", 503: " + honest.unavailable.get() + ", failed: " + honest.failed.get()
                + ")", "< 1 %", honest.errorRate() < 0.01);
    }

    /** Nothing the limiter refused reached the upstream. */
    Check onlyAllowedReachUpstream(Played p) {
        long ok = p.run().ok();
        long failed = p.run().stats.stream().mapToLong(s -> s.failed.get()).sum();
        long hits = upstream.hits();
        return new Check("the upstream sees only allowed traffic", hits + " at upstream, " + ok + " allowed, "
                + (p.run().sent() - ok - failed) + " refused", "upstream ≤ allowed + timed out (" + failed + ")",
                hits <= ok + failed);
    }

    /** The store's work per second and per request, reported. */
    Check storeCalls(Played p) {
        long sent = Math.max(1, p.run().sent());
        return new Check("store calls", String.format(Locale.ROOT, "%s round trips/s (%s per request; script calls, "
                + "INFO commandstats), %s Redis commands/s (%s per request, in-script ones included)",
                Report.f(p.scriptCalls() / p.seconds()), Report.f((double) p.scriptCalls() / sent),
                Report.f(p.storeCommands() / p.seconds()), Report.f((double) p.storeCommands() / sent)), "reported",
                true);
    }

    /** The latency ours adds over the limiter off, when that was measured; otherwise the latency, reported. */
    List<Check> latencyAdded(Load.Stats honest) {
        double p50 = honest.percentileMillis(0.5);
        double p99 = honest.percentileMillis(0.99);
        if (Double.isNaN(offP99)) {
            return List.of(new Check("honest latency", "p50 " + Report.f(p50) + " ms, p99 " + Report.f(p99) + " ms",
                    "reported (run side-by-side for the limiter-off reference)", true));
        }
        return List.of(new Check("latency added vs limiter off", String.format(Locale.ROOT,
                "p50 %+.2f ms (%.2f vs %.2f), p99 %+.2f ms (%.2f vs %.2f)", p50 - offP50, p50, offP50, p99 - offP99,
                p99, offP99), "p99 added < 50 ms", p99 - offP99 < 50));
    }

    /** A noisy neighbour does not slow the honest clients much past the baseline, when that ran. */
    Check honestNotSlowed(Load.Stats honest) {
        double p99 = honest.percentileMillis(0.99);
        if (Double.isNaN(baselineP99)) {
            return new Check("honest p99", Report.f(p99) + " ms", "reported (no baseline run)", true);
        }
        // loose: on a shared 2-core machine the refused traffic itself takes CPU from everything else
        double bound = 3 * baselineP99 + 100;
        return new Check("honest clients not slowed", "p99 " + Report.f(p99) + " ms vs " + Report.f(baselineP99)
                + " ms in baseline", "≤ 3 × baseline + 100 ms = " + Report.f(bound) + " ms", p99 <= bound);
    }
}

package dev.ratelimiter.scenarios;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.ratelimiter.scenarios.Report.Result;

/**
 * Global limits split between regions, end to end: a sample-gateway per region on its own Redis, one broker, the
 * rebalancer, and one client at 2 × its global limit that moves — all in us-east-1, then all in eu-central-1, then
 * spread evenly — while the rebalancer moves the limit's quota after it.
 */
final class RegionsScenario {

    static final String NAME = "regions";
    static final String CLIENT_KEY = "region-traveller";
    /** A one-region phase outlasts the share's following ({@link #FOLLOW_BOUND}), to see the share held after it. */
    static final int MIN_PHASE_SECONDS = 12;
    /**
     * How soon a region's share must follow the traffic (reach the hot share; in the even phase, come back): its
     * gateway reports usage each second, the rebalancer rebalances each second, publishes the others' shrink first
     * and the grow once the shrink has been applied and 2 s have passed, and the gateways poll shares every 0.5 s —
     * 4–7 s seen; 10 s leaves room for a busy machine.
     */
    static final Duration FOLLOW_BOUND = Duration.ofSeconds(10);
    /**
     * How soon the share must follow a client that moved from one region to another (reach the hot share in the
     * region moved to): 3.3–5.7 s seen here and in the rebalancer's end-to-end test, whose bound this was.
     */
    static final Duration MOVE_BOUND = Duration.ofSeconds(8);
    /**
     * The first phase (from the default split) lasts at least this long: the share followed (within the move bound)
     * and then a whole window at the hot share, to see a saturated region admit what its share refills.
     */
    static final int MIN_FIRST_PHASE_SECONDS = 18;

    private final GlobalLimit limit = GlobalLimit.threeRegions();
    private final int phaseSeconds;

    RegionsScenario(int seconds) {
        this.phaseSeconds = Math.max(MIN_PHASE_SECONDS, seconds);
    }

    /**
     * All in us-east-1, all in eu-central-1, spread evenly: at twice the limit's rate throughout. The first phase
     * lasts at least {@link #MIN_FIRST_PHASE_SECONDS} (a saturated window after the share followed). The even phase
     * lasts at least the follow bound and one window more: its shares must be back within the bound, and its total
     * is counted over its last window, once they are.
     */
    List<Phase> phases() {
        double rate = 2.0 * limit.limit() / limit.period().toSeconds();
        int firstSeconds = Math.max(MIN_FIRST_PHASE_SECONDS, phaseSeconds);
        int evenSeconds = (int) Math.max(phaseSeconds, FOLLOW_BOUND.toSeconds() + limit.period().toSeconds());
        return List.of(new Phase("us-east-1 only", 0, firstSeconds, Map.of("us-east-1", rate)),
                new Phase("eu-central-1 only", firstSeconds, phaseSeconds, Map.of("eu-central-1", rate)),
                new Phase("spread evenly", firstSeconds + phaseSeconds, evenSeconds, evenly(rate)));
    }

    /** {@code rate} requests a second in all, the same to every region. */
    private Map<String, Double> evenly(double rate) {
        Map<String, Double> rates = new LinkedHashMap<>();
        limit.regions().forEach(region -> rates.put(region, rate / limit.regions().size()));
        return rates;
    }

    Result run(Path jar, Upstream upstream, Duration storeTimeout, Path out) {
        List<Phase> phases = phases();
        try (RegionDeployment regions = new RegionDeployment(limit, jar, upstream.uri(), storeTimeout,
                out.resolve("logs")); ShiftingClient client = new ShiftingClient(regions.ports())) {
            System.out.printf(Locale.ROOT, "regions: broker, %d Redis, rebalancer and %d gateways ready in %.1f s%n",
                    limit.regions().size(), limit.regions().size(), regions.startupSeconds());
            // a fresh gateway's first requests are slow (connections, classes, JIT): paid by another key, under its
            // share, so that nothing moves for it
            client.play("region-warmup", List.of(new Phase("warm-up", 0, 1, evenly(9))));
            upstream.reset(System.nanoTime());
            RegionAnswers answers = new RegionAnswers(client.play(CLIENT_KEY, phases));
            RegionSeries series = new RegionSeries(limit.regions(), phases.get(phases.size() - 1).toSecond(), answers);
            Path csv = series.writeCsv(out.resolve(NAME + ".csv"));
            Path png = new RegionChart(limit, phases, series).writePng(out.resolve(NAME + ".png"));
            return new Result(NAME, description(phases), new RegionChecks(limit, FOLLOW_BOUND, MOVE_BOUND).all(phases,
                    answers, upstream.hitsForKey(CLIENT_KEY)), csv, png);
        }
    }

    private String description(List<Phase> phases) {
        return String.format(Locale.ROOT, "one API key at 2 × its global limit (%d per %d s; default split %s, floor "
                + "%s): %s; a sample-gateway per region on its own Redis, one Kafka broker, the rebalancer",
                limit.limit(), limit.period().toSeconds(), limit.defaultSplit(), Report.pct(limit.floor()),
                String.join(", ", phases.stream().map(p -> p.name() + " " + p.seconds() + " s").toList()));
    }
}

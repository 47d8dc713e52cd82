package dev.ratelimiter.scenarios;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.IntStream;

import dev.ratelimiter.scenarios.Load.Group;
import dev.ratelimiter.scenarios.Report.Check;
import dev.ratelimiter.scenarios.Report.Result;
import dev.ratelimiter.testsupport.RedisServer;

/**
 * The seeds' stories, each a few seconds of open-loop load through the gateways, with the requirement checks of each.
 */
final class Scenarios {

    static final String EDGE_KEY = "edge-client";
    static final String NOISY_KEY = "noisy-client";
    /** In the order they run; store-down last, since our gateways take a few seconds to use a restarted Redis. */
    static final List<String> ALL = List.of("baseline", "noisy", "flood", "botnet", "slow", "window-edge",
            "store-down");

    private final Limits limits;
    private final RedisServer redis;
    private final Upstream upstream;
    private final StoreCounters counters;
    private final Player player;
    private final StoryChecks storyChecks;
    private final List<String> honestKeys;

    Scenarios(Limits limits, RedisServer redis, Upstream upstream, Path out) {
        this.limits = limits;
        this.redis = redis;
        this.upstream = upstream;
        this.counters = new StoreCounters(redis);
        this.player = new Player(upstream, counters, out);
        this.storyChecks = new StoryChecks(upstream);
        this.honestKeys = IntStream.range(0, limits.honestClients()).mapToObj(i -> "honest-" + i).toList();
    }

    Group honest() {
        return new Group("honest", "/api/hello", honestKeys, limits.honestRate(), true);
    }

    Group noisy(int factor) {
        return new Group("noisy", "/api/hello", List.of(NOISY_KEY), (double) limits.quota() * factor, false);
    }

    /** Plays the stages of the stories, and of the side by side. */
    Player player() {
        return player;
    }

    /** The checks shared by the stories, and their references. */
    StoryChecks storyChecks() {
        return storyChecks;
    }

    Result run(String scenario, Load load, Gateways gateways) {
        return switch (scenario) {
            case "baseline" -> baseline(load);
            case "noisy" -> noisy("noisy", load, gateways, limits.noisyFactor());
            case "flood" -> noisy("flood", load, gateways, limits.noisyFactor() * limits.floodFactor());
            case "botnet" -> botnet(load);
            case "slow" -> slow(load);
            case "store-down" -> storeDown(load, gateways);
            case "window-edge" -> windowEdge(load);
            default -> throw new IllegalArgumentException("unknown scenario " + scenario + "; one of " + ALL);
        };
    }

    private Duration duration() {
        return Duration.ofSeconds(limits.seconds());
    }

    private Result baseline(Load load) {
        Played p = player.play("baseline", load, List.of(honest()), duration(), null);
        Load.Stats honest = p.run().group("honest");
        List<Check> checks = new ArrayList<>();
        checks.add(storyChecks.honestErrors(honest));
        checks.add(storyChecks.onlyAllowedReachUpstream(p));
        checks.add(storyChecks.storeCalls(p));
        storyChecks.baseline(honest.percentileMillis(0.99));
        checks.addAll(storyChecks.latencyAdded(honest));
        return new Result("baseline", String.format(Locale.ROOT,
                "%d honest clients (the seeds' 10,000 scaled down), %d rps in all, each at %s rps against a quota of %d",
                limits.honestClients(), limits.honestRate(),
                Report.f((double) limits.honestRate() / limits.honestClients()), limits.quota()),
                checks, p.csv(), p.png());
    }

    private Result noisy(String name, Load load, Gateways gateways, int factor) {
        Group noisy = noisy(factor);
        List<FallbackAllowance.Reading> before = fallbackSoFar(gateways);
        Played p = player.play(name, load, List.of(honest(), noisy), duration(), null);
        // measured, not assumed: an instance whose store calls time out (a GC pause longer than the store timeout on
        // this starved machine) decides from its own fallback share meanwhile, on top of what the store admits
        FallbackAllowance fallback = FallbackAllowance.over(limits.quota(), before, fallbackSoFar(gateways));
        Load.Stats honest = p.run().group("honest");
        Load.Stats n = p.run().group("noisy");
        List<Check> checks = new ArrayList<>();
        checks.add(storyChecks.honestErrors(honest));
        // decisions go on for up to a second after the last request is sent (responses still in flight)
        double quotaTotal = limits.quota() * (p.seconds() + 1) + limits.quota();
        double admittedBound = quotaTotal + fallback.requests();
        checks.add(new Check("noisy client admitted vs quota (" + limits.quota() + "/s, burst " + limits.quota() + ")",
                n.ok.get() + " admitted, " + n.refused.get() + " refused in " + Report.f(p.seconds()) + " s of "
                        + n.sent.get() + " sent",
                fallback.none() ? "≤ 1.1 × " + Report.f(quotaTotal)
                        : "≤ 1.1 × (" + Report.f(quotaTotal) + " + " + fallback.describe() + ")",
                n.ok.get() <= 1.1 * admittedBound));
        double refusedRate = n.refused.get() / p.seconds();
        // what the fallback share may have admitted was not refused: less by as much a second
        double expected = 0.9 * (noisy.rate() - limits.quota()) - fallback.requests() / p.seconds();
        checks.add(new Check("noisy refused over quota", Report.f(refusedRate) + " rps refused of " +
                Report.f(noisy.rate()) + " rps offered", fallback.none()
                        ? "≥ 0.9 × (offered − quota) = " + Report.f(expected) + " rps"
                        : "≥ 0.9 × (offered − quota) − " + Report.f(fallback.requests()) + " from the fallback share ÷ "
                                + Report.f(p.seconds()) + " s = " + Report.f(expected) + " rps",
                refusedRate >= expected));
        long noisyUpstream = upstream.hitsForKey(NOISY_KEY);
        checks.add(new Check("noisy client's requests at the upstream = its admitted",
                noisyUpstream + " at upstream, " + n.ok.get() + " admitted", "≤ admitted + timed out (" + n.failed.get()
                        + ")", noisyUpstream <= n.ok.get() + n.failed.get()));
        checks.add(storyChecks.onlyAllowedReachUpstream(p));
        checks.add(storyChecks.storeCalls(p));
        checks.add(storyChecks.honestNotSlowed(honest));
        return new Result(name, String.format(Locale.ROOT, "the honest load plus one client at %d × its quota (%s rps)",
                factor, Report.f(noisy.rate())), checks, p.csv(), p.png());
    }

    private static List<FallbackAllowance.Reading> fallbackSoFar(Gateways gateways) {
        return IntStream.range(0, gateways.size()).mapToObj(gateways::fallbackSoFar).toList();
    }

    private Result botnet(Load load) {
        List<String> bots = IntStream.range(0, limits.botnetKeys()).mapToObj(i -> "bot-" + i).toList();
        Group botnet = new Group("botnet", "/login/attempt", bots, limits.botnetRate(), false);
        Played p = player.play("botnet", load, List.of(honest(), botnet), duration(), null);
        Load.Stats b = p.run().group("botnet");
        List<Check> checks = new ArrayList<>();
        checks.add(storyChecks.honestErrors(p.run().group("honest")));
        double perKey = (double) limits.botnetRate() / limits.botnetKeys();
        checks.add(new Check("each bot under its quota", Report.f(perKey) + " rps per key", "< " + limits.quota(),
                perKey < limits.quota()));
        long login = upstream.hits("/login");
        double cap = limits.loginCap() * p.seconds() + limits.loginCap();
        checks.add(new Check("/login as a whole held to its cap (" + limits.loginCap() + "/s)", login
                + " reached /login of " + b.sent.get() + " sent (" + Report.f(login / p.seconds()) + " rps)",
                "≤ 1.1 × " + Report.f(cap), login <= 1.1 * cap));
        checks.add(new Check("the cap bites", b.refused.get() + " refused", "> 0", b.refused.get() > 0));
        checks.add(storyChecks.onlyAllowedReachUpstream(p));
        checks.add(storyChecks.storeCalls(p));
        return new Result("botnet", String.format(Locale.ROOT,
                "%d keys at %s rps each (%d rps in all) on /login, per-endpoint cap %d/s, plus the honest load",
                limits.botnetKeys(), Report.f(perKey), limits.botnetRate(), limits.loginCap()), checks, p.csv(),
                p.png());
    }

    private Result slow(Load load) {
        List<String> polite = IntStream.range(0, 5).mapToObj(i -> "reporter-" + i).toList();
        Group greedy = new Group("greedy-reporter", "/reports/run", List.of("greedy-reporter"), 8, false);
        Group politeGroup = new Group("reporters", "/reports/run", polite, 2, true);
        Duration base = Duration.ofMillis(50);
        Played p = player.play("slow", load, List.of(honest(), greedy, politeGroup), duration(), start -> {
            upstream.reportDelay(base);
            Pause.millis(duration().toMillis() / 2);
            upstream.reportDelay(base.multipliedBy(7));
        });
        Load.Stats g = p.run().group("greedy-reporter");
        Load.Stats r = p.run().group("reporters");
        List<Check> checks = new ArrayList<>();
        checks.add(storyChecks.honestErrors(p.run().group("honest")));
        int greedyMax = upstream.maxInFlight("greedy-reporter");
        checks.add(new Check("greedy client's reports in progress at the upstream", "at most " + greedyMax,
                "≤ 2 (reports-in-progress)", greedyMax <= 2));
        int politeMax = polite.stream().mapToInt(upstream::maxInFlight).max().orElse(0);
        checks.add(new Check("other clients still get reports", Report.pct(r.errorRate()) + " not answered 200 of "
                + r.sent.get(), "< 1 %", r.errorRate() < 0.01 && politeMax <= 2));
        checks.add(new Check("greedy client refused once the endpoint is slow", g.refused.get() + " refused of "
                + g.sent.get(), "> 0", g.refused.get() > 0));
        checks.add(storyChecks.onlyAllowedReachUpstream(p));
        return new Result("slow", "report upstream 50 ms, then 7 × slower (350 ms) half-way; one client asks for 8 "
                + "reports a second, 5 others for 0.4 each, plus the honest load", checks, p.csv(), p.png());
    }

    private Result storeDown(Load load, Gateways gateways) {
        Duration d = duration().multipliedBy(2);
        double killAt = d.toMillis() / 3000.0;
        double restartAt = 2 * killAt;
        long[] commandsAfterRestart = new long[1];
        double[] recoveredAfter = {-1};
        Group noisy = noisy(limits.noisyFactor());
        Played p = player.play("store-down", load, List.of(honest(), noisy), d, start -> {
            Pause.until(start, killAt);
            redis.kill();
            Pause.until(start, restartAt);
            redis.restart();
            long restarted = System.nanoTime();
            long end = start + d.toNanos() - 200_000_000L;
            long last = counters.totalCommands();
            while (System.nanoTime() < end && recoveredAfter[0] < 0) {
                Pause.millis(100);
                long now = counters.totalCommands();
                if (now - last > 20) {
                    recoveredAfter[0] = (System.nanoTime() - restarted) / 1e9;
                }
                last = now;
            }
            Pause.until(start, d.toMillis() / 1000.0 - 0.2);
            commandsAfterRestart[0] = counters.totalCommands();
        });
        Load.Stats honest = p.run().group("honest");
        Load.Stats n = p.run().group("noisy");
        List<Check> checks = new ArrayList<>();
        checks.add(storyChecks.honestErrors(honest));
        int from = (int) Math.ceil(killAt);
        int to = (int) Math.floor(restartAt);
        long admitted = 0;
        for (int s = from; s < to; s++) {
            admitted += n.okPerSecond.get(s);
        }
        int secs = Math.max(1, to - from);
        double shares = Math.min(gateways.size(), FallbackAllowance.SHARE_FACTOR);
        double bound = shares * limits.quota() * secs * 1.2 + shares * limits.quota();
        checks.add(new Check("limiting goes on while the store is down (noisy admitted in the outage)",
                admitted + " in " + secs + " s (" + Report.f((double) admitted / secs) + " rps)",
                "≤ fallback share: quota ÷ " + gateways.size() + " × " + Report.f(FallbackAllowance.SHARE_FACTOR)
                        + " per instance, ×1.2 + burst = "
                        + Report.f(bound), admitted <= bound));
        checks.add(new Check("noisy still refused in the outage", n.refused.get() + " refused in all",
                "> 0", n.refused.get() > 0));
        boolean up = gateways.allAlive() && IntStream.range(0, gateways.size()).allMatch(gateways::answersHealth);
        checks.add(new Check("gateways stay up", up ? "all answering" : "not all answering", "all", up));
        checks.add(new Check("store used again after restart", commandsAfterRestart[0]
                + " commands on the restarted Redis", "> 10", commandsAfterRestart[0] > 10));
        checks.add(new Check("time until the gateways use the restarted store again (> 20 commands in 100 ms)",
                recoveredAfter[0] < 0 ? "not within the run" : Report.f(recoveredAfter[0]) + " s",
                "reported (meanwhile each instance decides from its fallback share)", true));
        checks.add(storyChecks.onlyAllowedReachUpstream(p));
        return new Result("store-down", String.format(Locale.ROOT,
                "honest + noisy load; Redis killed at %.1f s, restarted (empty) at %.1f s", killAt, restartAt),
                checks, p.csv(), p.png());
    }

    private Result windowEdge(Load load) {
        long windowMillis = limits.window().toMillis();
        double w = windowMillis / 1000.0;
        int l = limits.windowLimit();
        double edge = 0.2;
        double boundary = 1.0;
        // a burst of the limit just before a window boundary and another just after it: a fixed window would let
        // 2 × limit through; a sliding window about one limit
        List<double[]> bursts = List.of(new double[] {boundary - edge, l}, new double[] {boundary + edge, l});
        Group group = new Group("edge", "/api/hello", List.of(EDGE_KEY), 0, false, true, bursts);
        Duration d = Duration.ofMillis((long) ((boundary + w / 2) * 1000));
        // the store's windows start at multiples of the window on its clock (Redis TIME; the same host's clock here):
        // start the run one second before one, so that the bursts straddle a real boundary
        long now = System.currentTimeMillis();
        Pause.millis(Math.floorMod(windowMillis - 1000 - now % windowMillis, windowMillis));
        Played p = player.play("window-edge", load, List.of(group), d, null);
        // what reached the upstream, timed there: the decisions, without the client's view of response latency
        long[] times = upstream.edgeArrivals();
        long windowNanos = limits.window().toNanos();
        List<Check> checks = new ArrayList<>();
        long before = java.util.Arrays.stream(times).filter(t -> t < (long) (boundary * 1e9)).count();
        checks.add(new Check("a quiet client's burst before the boundary gets its limit", before + " of " + l,
                "≥ 0.9 × " + l, before >= 0.9 * l));
        checks.add(new Check("bursts of 2 × " + l + " across the window boundary (±" + Report.f(edge * 1000)
                + " ms)", times.length + " reached the upstream", "≤ 1.1 × " + l + " = " + Report.f(1.1 * l),
                times.length <= 1.1 * l));
        int most = 0;
        for (int i = 0, j = 0; i < times.length; i++) {
            while (times[i] - times[j] >= windowNanos) {
                j++;
            }
            most = Math.max(most, i - j + 1);
        }
        checks.add(new Check("most in any " + Report.f(w) + " s interval at the upstream", String.valueOf(most),
                "reported (two weighted fixed windows approximate the sliding one)", true));
        checks.add(storyChecks.onlyAllowedReachUpstream(p));
        return new Result("window-edge", String.format(Locale.ROOT,
                "sliding window %d per %s s; bursts of %d at %.0f ms before and after a window boundary", l,
                Report.f(w), l, edge * 1000), checks, p.csv(), p.png());
    }
}

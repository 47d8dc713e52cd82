package dev.ratelimiter.scenarios;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.LongConsumer;

import dev.ratelimiter.scenarios.Load.Group;

/**
 * Plays one stage of a scenario: open-loop load through the gateways for a while, optionally with a fault injected
 * meanwhile, and records what the upstream and the store saw and the series files.
 */
final class Player {

    private final Upstream upstream;
    private final StoreCounters counters;
    private final Path out;

    Player(Upstream upstream, StoreCounters counters, Path out) {
        this.upstream = upstream;
        this.counters = counters;
        this.out = out;
    }

    /**
     * Plays {@code groups} for {@code duration}; {@code during} (may be null) runs on this thread meanwhile, given the
     * run's start ({@link System#nanoTime()}), to inject a fault at a moment of the run.
     */
    Played play(String name, Load load, List<Group> groups, Duration duration, LongConsumer during) {
        long start = System.nanoTime();
        upstream.reset(start);
        long commands0 = counters.totalCommands();
        long scripts0 = counters.scriptCalls();
        Load.Run run = load.start(groups, duration, start);
        if (during != null) {
            during.accept(start);
        }
        run.await();
        long commands1 = counters.totalCommands();
        long scripts1 = counters.scriptCalls();
        Path[] files = Report.series(out, name, run, upstream, (int) Math.ceil(duration.toMillis() / 1000.0) + 1);
        // a restarted Redis counts from zero: what it counted since is the least that was done
        return new Played(run, commands1 >= commands0 ? commands1 - commands0 : commands1,
                scripts1 >= scripts0 ? scripts1 - scripts0 : scripts1, duration.toMillis() / 1000.0, files[0],
                files[1]);
    }
}

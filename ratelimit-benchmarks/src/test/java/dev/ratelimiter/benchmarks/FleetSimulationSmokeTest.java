package dev.ratelimiter.benchmarks;

import java.util.List;

import dev.ratelimiter.benchmarks.FleetOptions.Mode;
import dev.ratelimiter.benchmarks.FleetOptions.Topology;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Keeps the fleet simulation from rotting: a tiny fleet in both modes on one Redis and on a 3-primary cluster, its
 * figures checked against what Redis itself counted. The figures worth reading come from a full run
 * ({@link FleetSimulation}'s Javadoc), not from here.
 */
class FleetSimulationSmokeTest {

    @Test
    void aTinyFleetIsMeasuredByRedisOnBothTopologies() throws InterruptedException {
        // A time scale of 5 (settles every 500 ms, refill 50 per 5 s) and a 2 s store timeout: a busy machine's pauses
        // must not make a healthy Redis look unavailable. 3 × 100 decisions/s over 200 keys: 1.5/s per key, a seventh
        // of what its bucket refills.
        FleetOptions options = FleetOptions.parse("--instances=3", "--rate=500", "--keys=200", "--warmup=1s",
                "--duration=2s", "--time-scale=5", "--store-timeout=2s");
        List<FleetRun> runs = FleetSimulation.run(options);
        System.out.println(FleetReport.of(options, runs));

        assertThat(runs).extracting(FleetRun::mode, FleetRun::topology).containsExactly(
                tuple(Mode.LOCAL, Topology.STANDALONE), tuple(Mode.EXACT, Topology.STANDALONE),
                tuple(Mode.LOCAL, Topology.CLUSTER), tuple(Mode.EXACT, Topology.CLUSTER));
        assertThat(runs).allSatisfy(run -> {
            assertThat(run.primaries()).hasSize(run.topology() == Topology.CLUSTER ? 3 : 1);
            assertThat(run.primaries()).as("every primary runs scripts (settle slots and clients spread over all)")
                    .allSatisfy(primary -> assertThat(primary.scriptCalls()).isPositive());
            assertThat(run.window().get(FleetTally.Count.MADE)).isPositive();
            assertThat(run.window().get(FleetTally.Count.ERRORS)).isZero();
            assertThat(run.fallbacks()).as("a healthy Redis answers every decision").isZero();
            assertThat(run.total().calls(run.unitCommand())).as("Redis ran the %ss", run.unitName()).isPositive();
            assertThat(run.sustainedPerPrimary()).isPositive();
            assertThat(run.liveInstancesMin()).as("every instance counts the whole fleet").isEqualTo(3);
        });
        assertThat(runs).filteredOn(run -> run.mode() == Mode.LOCAL).allSatisfy(run -> {
            assertThat(run.window().get(FleetTally.Count.SETTLES)).isPositive();
            assertThat(run.reportsSent()).as("bucket-settles the instances sent, as Redis ran them")
                    .isPositive().isEqualTo(run.bucketSettlesRedisRan());
            // Local mode refuses a little under the limit: a client whose next request lands on another instance
            // may find that instance's share emptied by a settle until its next one (LeaseStore's Javadoc).
            assertThat(run.refused()).isLessThan(run.verdicts() / 10);
        });
        assertThat(runs).filteredOn(run -> run.mode() == Mode.EXACT).allSatisfy(run -> {
            assertThat(run.refused()).as("every client under its limit").isZero();
            assertThat(run.reportsSent()).as("no local-mode share, nothing settled").isZero();
            assertThat(run.total().calls("hgetall")).isZero();
            assertThat(run.decisionsPerCall()).isGreaterThanOrEqualTo(1);
        });
    }

    @Test
    void theCommandLineReadsBackAsTheSameOptions() {
        FleetOptions options = FleetOptions.parse("--instances=7", "--rate=300", "--mode=exact",
                "--topology=cluster", "--distribution=zipf", "--zipf-exponent=1.2", "--time-scale=4",
                "--duration=1500ms");
        assertThat(FleetOptions.parse(options.commandLine().split(" "))).isEqualTo(options);
        assertThat(options.settleInterval().toMillis()).isEqualTo(400);
        assertThat(options.simulatedRate()).isEqualTo(7 * 300 / 4.0);
    }

    @Test
    void onPaperTheSeedsFleetSettlesTheKeysOfTwoIntervals() {
        // 200 decisions per instance per interval over 10,000 keys: 198 distinct, 392 over two intervals
        String local = FleetReport.paper(FleetOptions.DEFAULTS).get(1);
        assertThat(local).contains("over 198 distinct keys").contains("392 keys per settle")
                .contains("**196,062**");
    }
}

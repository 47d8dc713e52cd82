package dev.ratelimiter.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.benchmarks.FleetOptions.Mode;
import dev.ratelimiter.benchmarks.FleetOptions.Topology;
import dev.ratelimiter.benchmarks.sidebyside.CommandStats;
import dev.ratelimiter.benchmarks.sidebyside.MachineCpu;
import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.TokenBucketLimit;

/**
 * The seeds' fleet in one JVM: {@code instances} gateways, each the product's own Redis store stack
 * ({@link FleetInstance}), deciding {@code rate} requests per second each over {@code keys} clients against a real
 * Redis — one server, and a cluster of 3 primaries — and what each Redis primary receives and spends for it, as
 * Redis itself counts it: script calls, bucket-settles (local mode) or decisions (exact mode), commands, CPU. From
 * those, what one primary sustains at 100 % of its core. Printed as a markdown table beside the same figures worked
 * out on paper ({@link FleetReport}).
 *
 * <pre>
 * java -Xmx4g -cp ratelimit-benchmarks/target/benchmarks.jar dev.ratelimiter.benchmarks.FleetSimulation \
 *     [--instances=50] [--rate=2000] [--keys=10000] [--warmup=10s] [--duration=30s] [--mode=local|exact|both]
 *     [--topology=standalone|cluster|both] [--distribution=uniform|zipf] [--zipf-exponent=1.0] [--drivers=2]
 *     [--time-scale=1] [--store-timeout=5ms] [--seed=1]
 * </pre>
 *
 * The load generator, the 50 instances and Redis share this machine: each row says how busy the machine was and
 * where the JVM's CPU went, and how many of the decisions asked were made, so that a reader can tell which side was
 * the bottleneck. {@code --time-scale=k} runs the same fleet k times slower (rates ÷ k, intervals and refill period
 * × k: every settle interval sees the same traffic) and multiplies the per-second figures back, for a machine that
 * cannot keep up in real time.
 */
public final class FleetSimulation {

    /** The sample gateway's tier rule id for the pro tier's default route class. */
    static final String RULE_ID = "pro.default";

    private FleetSimulation() {
    }

    public static void main(String[] args) throws InterruptedException {
        FleetOptions options = FleetOptions.parse(args);
        List<FleetRun> runs = run(options);
        System.out.println();
        System.out.println(FleetReport.of(options, runs));
    }

    /** Every mode on every topology, one fleet each. */
    static List<FleetRun> run(FleetOptions options) throws InterruptedException {
        KeyDistribution distribution = KeyDistribution.of(options.keys(), options.zipfExponent(), options.seed());
        List<FleetRun> runs = new ArrayList<>();
        for (Topology topology : options.topologies()) {
            try (FleetRedis redis = FleetRedis.start(topology)) {
                for (Mode mode : options.modes()) {
                    redis.flush();
                    System.out.printf("%s on %s: starting %d instances%n", mode, redis.description(),
                            options.instances());
                    FleetRun result = runOne(redis, mode, options, distribution);
                    System.out.println(FleetReport.row(result));
                    runs.add(result);
                }
            }
        }
        return runs;
    }

    private static FleetRun runOne(FleetRedis redis, Mode mode, FleetOptions options, KeyDistribution distribution)
            throws InterruptedException {
        List<List<Check>> checks = checks(mode, options);
        FleetTally tally = new FleetTally();
        FleetRedis.Reading atStart = redis.read();
        List<FleetInstance> instances = new ArrayList<>();
        try {
            for (int i = 0; i < options.instances(); i++) {
                instances.add(FleetInstance.start(redis, options, tally));
            }
            instances.forEach(FleetInstance::recount);
            FleetLoad load = new FleetLoad(instances, checks, distribution, options, tally);
            load.start();
            Thread.sleep(options.warmup().toMillis());

            int liveMin = instances.stream().mapToInt(FleetInstance::liveInstances).min().orElse(0);
            // Each reading is taken in the same order at both ends, so each spans the window give or take a few ms.
            long startNanos = System.nanoTime();
            FleetTally.Snapshot tallyBefore = tally.snapshot();
            MachineCpu machineBefore = MachineCpu.now();
            JvmCpu jvmBefore = JvmCpu.now();
            FleetRedis.Reading redisBefore = redis.read();

            Thread.sleep(options.duration().toMillis());

            double seconds = (System.nanoTime() - startNanos) / 1e9;
            FleetTally.Snapshot window = tally.snapshot().minus(tallyBefore);
            MachineCpu machine = MachineCpu.now();
            JvmCpu jvm = JvmCpu.now();
            FleetRedis.Reading redisAfter = redis.read();

            load.stop();
            instances.forEach(FleetInstance::stopSettling);
            long[] whole = drain(redis, tally, atStart, load);

            return new FleetRun(mode, redis.topology(), options.timeScale(), seconds, window, redisAfter.primaries(),
                    redisAfter.primariesSince(redisBefore), redisAfter.replicaCpuMicrosSince(redisBefore),
                    redisAfter.failedOverSince(redisBefore), machine.busySince(machineBefore),
                    machine.niceSince(machineBefore), Runtime.getRuntime().availableProcessors(),
                    jvm.processSecondsSince(jvmBefore), jvm.groupSecondsSince(jvmBefore), whole[0], whole[1], liveMin);
        }
        finally {
            instances.forEach(FleetInstance::close);
        }
    }

    /**
     * Waits (a few seconds at most) for the decisions and settles in flight to end and for Redis to have run every
     * settle sent; returns the bucket reports sent over the whole run and the bucket-settles Redis ran for them.
     */
    private static long[] drain(FleetRedis redis, FleetTally tally, FleetRedis.Reading atStart, FleetLoad load)
            throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        long sent;
        long ran;
        do {
            Thread.sleep(100);
            FleetTally.Snapshot all = tally.snapshot();
            sent = all.get(FleetTally.Count.REPORTS) - all.get(FleetTally.Count.NOT_SENT);
            ran = redis.read().allSince(atStart).calls("hgetall");
        }
        while ((ran != sent || load.inFlight() > 0) && System.nanoTime() < deadline);
        return new long[] { sent, ran };
    }

    /** One check per key, as the gateway makes it for a pro client on a default route: its bucket of the tier rule. */
    static List<List<Check>> checks(Mode mode, FleetOptions options) {
        TokenBucketLimit limit = TokenBucketLimit.of("ratelimit.tiers.pro.limits.default.", FleetOptions.CAPACITY,
                FleetOptions.REFILL_PER_SECOND, options.refillPeriod());
        Rule rule = new Rule(RULE_ID, "tier-default", Match.ANY, List.of(Dimension.API_KEY), limit, 0,
                dev.ratelimiter.core.Mode.ENFORCE, FailureMode.LOCAL,
                mode == Mode.LOCAL ? StoreMode.LOCAL : StoreMode.EXACT, 1);
        // Named as RateLimitEvaluator names a per-API-key bucket: the hashed key, then rule id and state shape.
        String name = rule.id() + "@" + limit.shape();
        ClientIds ids = ClientIds.unkeyed();
        List<List<Check>> checks = new ArrayList<>(options.keys());
        for (int k = 0; k < options.keys(); k++) {
            checks.add(List.of(new Check(rule, new BucketKey(ids.of("client-" + k), name), 1, false)));
        }
        return checks;
    }

    static CommandStats sum(List<CommandStats> stats) {
        CommandStats total = CommandStats.NONE;
        for (CommandStats one : stats) {
            total = total.plus(one);
        }
        return total;
    }
}

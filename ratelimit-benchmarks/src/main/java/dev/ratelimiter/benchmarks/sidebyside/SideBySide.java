package dev.ratelimiter.benchmarks.sidebyside;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;

import dev.ratelimiter.benchmarks.sidebyside.BenchGateway.Case;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;

/**
 * The limiters side by side, measured as users deploy them: each case is the bench gateway's fat jar started with
 * {@code java -Xms512m -Xmx512m -jar} (default JIT and GC), one at a time, against one Redis on this machine and an
 * upstream answering {@code ok} (nginx when installed), driven by wrk (when installed) at a fixed number of
 * connections. Per case: the allowed path (1,000 random API keys under a limit none reaches) and the refused path (one
 * key at 10/s), each after a warm-up; then the allowed path paced at shares of the rate at which the gateway without
 * limiter saturated in the same round (50 % and 90 %), with the machine's CPU and our fallback decisions. Rounds run
 * every case in turn, and ratios to "limiter off" are taken within a round and a layout: on a shared machine, only
 * those compare.
 *
 * <p>Besides the rates, what each request cost, steadier than a rate on a shared machine: the gateway JVM's CPU time
 * (user + system, all its threads, {@code /proc/<pid>/stat}) per request over each measured run, and the same minus
 * limiter off's of the same round and layout (the limiter's own cost); Redis's CPU per request ({@code INFO cpu});
 * the time Redis spent per script call and the decisions each call carried ({@code INFO commandstats}). The CPU of
 * wrk and nginx is not counted.
 *
 * <p>Layouts ({@link Layout}): {@code shared}, every process on every core; {@code pinned}, the gateway alone on one
 * core ({@code taskset -c 0 java …}) and Redis, nginx, wrk and this JVM on another ({@code taskset -a -p -c 1}): a
 * stand-in for Redis on a host of its own. Both by default: each answers what the other cannot (shared carries on the
 * figures published so far, pinned gives the gateway's cost without Redis and wrk on its cores), and they only compare
 * when interleaved in one run (round 1 shared, round 1 pinned, round 2 shared, …). The run takes twice as long;
 * {@code --layouts=shared} halves it. The pinned layout needs {@code taskset} and two cores; without them it is
 * skipped and the report says why.
 *
 * <pre>
 * java -cp ratelimit-benchmarks/target/benchmarks.jar dev.ratelimiter.benchmarks.sidebyside.SideBySide
 *     [--rounds=2] [--layouts=shared,pinned] [--warmup=30s] [--warmup-max=180s] [--warmup-slice=5s]
 *     [--duration=15s] [--connections=32] [--keys=1000]
 *     [--cases=off,scg-redis,scg-bucket4j,exact,local,mvc-off,mvc-exact,mvc-local] [--paced=10s] [--loads=0.5,0.9]
 *     (also, only when named: exact-unobserved, exact with ratelimit.observations.enabled=false)
 *     [--quick] [--no-tools] [--out=target/side-by-side]
 * </pre>
 * {@code --quick}: one round of each layout, 2 s warm-up, 3 s measured, 2 s paced (to see that it runs, not to
 * compare). {@code --no-tools}: the JVM's own load and upstream even where wrk and nginx are installed.
 * {@code BENCH_GATEWAY_JVM_ARGS} adds JVM arguments to every gateway (e.g. a flight recording).
 */
public final class SideBySide {

    /**
     * One case in one round of one layout. {@code allowGatewayMicros} and {@code denyGatewayMicros}: the gateway JVM's
     * CPU time over the allowed and the refused run (negative when it could not be read).
     */
    record Measured(Case limiter, int round, Layout layout, LoadResult allow, LoadResult deny, List<Paced> paced,
            CommandStats allowRedis, CommandStats denyRedis, long allowGatewayMicros, long denyGatewayMicros,
            long fallbackDecisions) {

        /** The allowed path at {@code share} of limiter off's saturating rate, or {@code null} when not run. */
        Paced at(double share) {
            return paced.stream().filter(p -> p.share() == share).findFirst().orElse(null);
        }

        /** What the allowed run cost, per request and per script call. */
        Cost allowCost() {
            return new Cost(allow, allowRedis, allowGatewayMicros);
        }

        /** What the refused run cost, per request and per script call. */
        Cost denyCost() {
            return new Cost(deny, denyRedis, denyGatewayMicros);
        }
    }

    /**
     * What one measured run cost: the gateway's CPU and Redis's per request served (answered, 200 or 429), and the
     * scripts. {@code NaN} where there is nothing to divide by (no script call) or the figure could not be read.
     */
    record Cost(LoadResult load, CommandStats redis, long gatewayMicros) {

        /** The gateway JVM's CPU time (user + system, all threads) per request served. */
        double gatewayMicrosPerRequest() {
            return gatewayMicros < 0 || load.requests() == 0 ? Double.NaN : (double) gatewayMicros / load.requests();
        }

        /** The Redis process's CPU time (user + system) per request served. */
        double redisMicrosPerRequest() {
            return load.requests() == 0 ? Double.NaN : (double) redis.cpuMicros() / load.requests();
        }

        /** Redis's time per script call (its {@code usec_per_call} for EVAL/EVALSHA over this run). */
        double luaMicrosPerCall() {
            return redis.scriptCalls() == 0 ? Double.NaN : (double) redis.scriptMicros() / redis.scriptCalls();
        }

        /** Script calls per request served. */
        double scriptCallsPerRequest() {
            return load.requests() == 0 ? Double.NaN : (double) redis.scriptCalls() / load.requests();
        }

        /** Requests served (each one decision of the limiter) per script call: the batch a call carries. */
        double decisionsPerScriptCall() {
            return redis.scriptCalls() == 0 ? Double.NaN : (double) load.requests() / redis.scriptCalls();
        }
    }

    /**
     * The allowed path at a fixed share of limiter off's saturating rate (same round): what it measured, how busy the
     * machine was, and how many of our decisions were made without Redis.
     */
    record Paced(double share, double target, LoadResult load, double machineCpu, long fallbackDecisions) {

        /** Within 10 % of the rate asked for: below that the case could not carry it, and its latency is a queue's. */
        boolean reached() {
            return load.requestsPerSecond() >= 0.9 * target;
        }
    }

    private SideBySide() {
    }

    public static void main(String[] args) {
        Options options = Options.parse(args);
        Path out = options.out.resolve(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        List<Measured> results = run(options, out);
        String report = SideBySideReport.markdown(results, options.describe());
        System.out.println(report);
        try {
            Files.createDirectories(out);
            Files.writeString(out.resolve("summary.md"), report);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        System.out.println("Written to " + out.resolve("summary.md"));
    }

    static List<Measured> run(Options options, Path out) {
        Map<Boolean, Path> jars = new java.util.HashMap<>();
        for (Case limiter : options.cases) {
            jars.computeIfAbsent(limiter.mvc, BenchGateway::locateJar);
        }
        Affinity affinity = Affinity.detect();
        List<Layout> layouts = new ArrayList<>(options.layouts);
        Optional<String> unpinnable = affinity.pinnedUnavailable();
        if (layouts.contains(Layout.PINNED) && unpinnable.isPresent()) {
            layouts.remove(Layout.PINNED);
            options.layouts = List.copyOf(layouts);
            options.skipped = "Layout pinned skipped: " + unpinnable.get() + ".";
            System.out.println(options.skipped);
        }
        if (layouts.isEmpty()) {
            throw new IllegalStateException("no layout left to run: " + options.skipped);
        }
        boolean pinning = layouts.contains(Layout.PINNED);
        List<Measured> results = new ArrayList<>();
        try (RedisServer redis = RedisServers.start(); Upstream upstream = Upstream.start(out, options.tools)) {
            List<Affinity.Pinnable> others = new ArrayList<>();
            Optional<ProcessHandle> redisProcess = Affinity.localRedis(redis);
            redisProcess.ifPresent(process -> others.add(new Affinity.Pinnable("Redis", process, false)));
            upstream.process().ifPresent(process -> others.add(new Affinity.Pinnable("nginx", process, true)));
            // the driver: its jcmd probes and, without wrk or nginx, the load and the upstream run in it
            others.add(new Affinity.Pinnable("the benchmark's JVM", ProcessHandle.current(), false));
            options.environment = redis.description() + "; upstream " + upstream.description() + "; load "
                    + new ClosedLoop(out, options.tools, List.of()).description()
                    + "; gateway CPU from /proc/<pid>/stat, "
                    + ProcessCpu.tickSource() + (pinning && redisProcess.isEmpty()
                            ? "; Redis is not a process of this machine: not pinned" : "");
            System.out.println("Side by side: " + options.environment);
            try {
                for (int round = 1; round <= options.rounds; round++) {
                    for (Layout layout : layouts) {
                        if (pinning) {
                            options.placements.put(layout, affinity.apply(layout, others));
                        }
                        ClosedLoop load = new ClosedLoop(out, options.tools, affinity.othersLauncher(layout));
                        Map<Case, Measured> thisRound = new EnumMap<>(Case.class);
                        for (Case limiter : options.cases) {
                            redis.command("FLUSHALL");
                            Measured measured = measure(limiter, round, layout, affinity.gatewayLauncher(layout),
                                    jars.get(limiter.mvc), redis, upstream, load, options,
                                    thisRound.get(limiter.baseline()), out);
                            thisRound.put(limiter, measured);
                            results.add(measured);
                            print(measured, thisRound.get(limiter.baseline()));
                        }
                    }
                }
            }
            finally {
                if (pinning) {
                    try {
                        affinity.apply(Layout.SHARED, others);
                    }
                    catch (RuntimeException ex) {
                        System.out.println("Could not move the processes back to all cores: " + ex.getMessage());
                    }
                }
            }
        }
        return results;
    }

    private static void print(Measured measured, Measured off) {
        Cost allow = measured.allowCost();
        double limiterCost = off == null || off == measured ? Double.NaN
                : allow.gatewayMicrosPerRequest() - off.allowCost().gatewayMicrosPerRequest();
        System.out.printf(Locale.ROOT, "round %d %-6s %-13s allow %8.0f req/s p99 %6.2f ms errors %d | deny %8.0f"
                + " req/s errors %d | gateway %s µs/req (limiter %s), Redis %s µs/req, Lua %s µs/call,"
                + " %s decisions/call | fallback %d%n", measured.round, measured.layout.id, measured.limiter.id,
                measured.allow.requestsPerSecond(), measured.allow.p99Millis(), measured.allow.errors(),
                measured.deny.requestsPerSecond(), measured.deny.errors(), figure("%.1f",
                        allow.gatewayMicrosPerRequest()), figure("%+.1f", limiterCost),
                figure("%.1f", allow.redisMicrosPerRequest()), figure("%.2f", allow.luaMicrosPerCall()),
                figure("%.1f", allow.decisionsPerScriptCall()), measured.fallbackDecisions);
        for (Paced paced : measured.paced) {
            System.out.printf(Locale.ROOT, "        %3.0f %% of off: %8.0f req/s, machine CPU %3.0f %%, p50 %.2f"
                    + " ms, p99 %.2f ms, fallback %d%n", paced.share() * 100,
                    paced.load().requestsPerSecond(), paced.machineCpu() * 100, paced.load().p50Millis(),
                    paced.load().p99Millis(), paced.fallbackDecisions());
        }
    }

    private static String figure(String pattern, double value) {
        return Double.isFinite(value) ? String.format(Locale.ROOT, pattern, value) : "-";
    }

    private static Measured measure(Case limiter, int round, Layout layout, List<String> launcher, Path jar,
            RedisServer redis, Upstream upstream, ClosedLoop load, Options options, Measured off, Path out) {
        try (BenchGateway gateway = new BenchGateway(launcher, jar, limiter, redis.url(), upstream.uri(),
                options.jvmArgs, out.resolve("logs"))) {
            String allowUrl = gateway.baseUrl() + "/bench/x";
            String denyUrl = gateway.baseUrl() + "/deny/x";
            warmUp(load, allowUrl, options, options.keys, limiter.id + " allow", options.warmup,
                    gateway::compileNanos);
            long fallbackBefore = gateway.fallbackDecisions();
            // Redis's figures read outside the gateway's, and the actuator (which costs the gateway) outside both
            CommandStats before = CommandStats.of(redis);
            ProcessCpu gatewayBefore = gateway.cpu();
            LoadResult allow = load.run(allowUrl, options.connections, options.duration, options.keys);
            long allowGateway = gateway.cpu().since(gatewayBefore);
            CommandStats allowRedis = CommandStats.of(redis).minus(before);
            long fallbacks = gateway.fallbackDecisions() - fallbackBefore;
            // The refused path runs code the allowed path has warmed already (server, filter, limiter): a shorter minimum.
            warmUp(load, denyUrl, options, 1, limiter.id + " deny", options.warmupSlice.multipliedBy(2),
                    gateway::compileNanos);
            before = CommandStats.of(redis);
            gatewayBefore = gateway.cpu();
            LoadResult deny = load.run(denyUrl, options.connections, options.duration, 1);
            long denyGateway = gateway.cpu().since(gatewayBefore);
            CommandStats denyRedis = CommandStats.of(redis).minus(before);
            double saturated = (off != null ? off.allow : allow).requestsPerSecond();
            List<Paced> paced = new ArrayList<>();
            if (!options.paced.isZero()) {
                for (double share : options.loads) {
                    double rate = saturated * share;
                    // A few seconds first, unmeasured: the pacing's own start (without wrk, its client's JIT), and a
                    // probe of the latency at this rate, taken out of the pause so that the rate is reached.
                    LoadResult probe = load.paced(allowUrl, options.connections, rate, Duration.ofSeconds(3),
                            options.keys);
                    double pause = options.connections * 1000.0 / rate;
                    double latency = Math.max(0, options.connections * 1000.0 / Math.max(1,
                            probe.requestsPerSecond()) - pause);
                    pause = Math.max(0.5, pause - latency);
                    long fallbackAtStart = gateway.fallbackDecisions();
                    MachineCpu cpuAtStart = MachineCpu.now();
                    LoadResult measured = load.paced(allowUrl, options.connections, rate, pause, options.paced,
                            options.keys);
                    paced.add(new Paced(share, rate, measured, MachineCpu.now().busySince(cpuAtStart),
                            gateway.fallbackDecisions() - fallbackAtStart));
                }
            }
            return new Measured(limiter, round, layout, allow, deny, paced, allowRedis, denyRedis, allowGateway,
                    denyGateway, fallbacks);
        }
    }

    /**
     * Loads {@code url} in slices of {@link Options#warmupSlice} until the JIT has finished with it: at least
     * {@code warmup}, then until the gateway's compilers were busy for less than {@value #COMPILING} of each of the
     * last two slices and the last three slices' rates agree within {@value #STEADY} (or {@code warmup-max}). A gateway
     * fresh from {@code java -jar} on two cores needs 60–150 s of load before C2 (competing with the load for the
     * cores) is done: limiter off went 1.4 k → 1.9 k → 3.3 k → 5.5 k → 6.5 k req/s in 10 s slices, so the fixed 8 s
     * warm-up used before measured the compiler and ranked the limiters by how much code they compile. Rates alone
     * are not enough: exact mode's plateaued at 1.3 k for 15 s while the compiler was still busy.
     */
    static void warmUp(ClosedLoop load, String url, Options options, int keys, String what, Duration atLeast,
            LongSupplier compileNanos) {
        long start = System.nanoTime();
        long minimum = Math.min(atLeast.toNanos(), options.warmup.toNanos());
        long maximum = Math.max(minimum, options.warmupMax.toNanos());
        List<Double> rates = new ArrayList<>();
        List<Double> compiling = new ArrayList<>();
        long compiledBefore = compileNanos.getAsLong();
        while (true) {
            long sliceStart = System.nanoTime();
            rates.add(load.run(url, options.connections, options.warmupSlice, keys).requestsPerSecond());
            long compiled = compileNanos.getAsLong();
            compiling.add(compiled < 0 || compiledBefore < 0 ? Double.NaN
                    : (double) (compiled - compiledBefore) / (System.nanoTime() - sliceStart));
            compiledBefore = compiled;
            long elapsed = System.nanoTime() - start;
            boolean steady = steady(rates, compiling);
            if (elapsed >= maximum || (elapsed >= minimum && steady)) {
                System.out.printf(Locale.ROOT, "  warm-up %s: %d s, req/s (compiler busy) per %d s slice: %s%s%n",
                        what, elapsed / 1_000_000_000L, options.warmupSlice.toSeconds(),
                        java.util.stream.IntStream.range(0, rates.size()).mapToObj(i -> String.format(Locale.ROOT,
                                "%.0f (%.0f %%)", rates.get(i), compiling.get(i) * 100))
                                .collect(java.util.stream.Collectors.joining(" → ")),
                        steady ? "" : " (not steady; stopped at warmup-max)");
                return;
            }
        }
    }

    /**
     * The compilers nearly idle through the last two slices (when their time can be read), and the last three
     * slices' rates within {@value #STEADY} of each other: a JIT still at work raises the rate by 4–5 % a slice.
     */
    static boolean steady(List<Double> rates, List<Double> compiling) {
        if (rates.size() < 3) {
            return false;
        }
        for (int i = compiling.size() - 2; i < compiling.size(); i++) {
            if (!compiling.get(i).isNaN() && compiling.get(i) > COMPILING) {
                return false;
            }
        }
        List<Double> last = rates.subList(rates.size() - 3, rates.size());
        double max = last.stream().mapToDouble(Double::doubleValue).max().orElse(0);
        double min = last.stream().mapToDouble(Double::doubleValue).min().orElse(0);
        return max > 0 && max - min <= STEADY * max;
    }

    /** The compilers' share of a slice's wall time below which the JIT counts as done. */
    static final double COMPILING = 0.05;

    /** Three warm-up slices within this share of each other: the JIT is done with the path. */
    static final double STEADY = 0.05;

    /** Command-line options. */
    static final class Options {

        int rounds = 2;
        List<Layout> layouts = List.of(Layout.values());
        Duration warmup = Duration.ofSeconds(30);
        Duration warmupMax = Duration.ofSeconds(180);
        Duration warmupSlice = Duration.ofSeconds(5);
        Duration duration = Duration.ofSeconds(15);
        Duration paced = Duration.ofSeconds(10);
        List<Double> loads = List.of(0.5, 0.9);
        int connections = 32;
        int keys = 1000;
        List<Case> cases = Case.defaults();
        Path out = Path.of("target/side-by-side");
        boolean tools = true;
        List<String> jvmArgs = List.of();
        String environment = "";
        /** Where each layout put the processes, as {@link Affinity#apply} said. */
        final Map<Layout, String> placements = new EnumMap<>(Layout.class);
        /** Why a layout asked for was not run, or empty. */
        String skipped = "";

        static Options parse(String[] args) {
            Options options = new Options();
            for (String arg : args) {
                String[] pair = arg.replaceFirst("^--", "").split("=", 2);
                String value = pair.length > 1 ? pair[1] : "";
                switch (pair[0]) {
                    case "rounds" -> options.rounds = Integer.parseInt(value);
                    case "layouts" -> options.layouts = Arrays.stream(value.split(",")).map(Layout::of).distinct()
                            .toList();
                    case "warmup" -> options.warmup = duration(value);
                    case "warmup-max" -> options.warmupMax = duration(value);
                    case "warmup-slice" -> options.warmupSlice = duration(value);
                    case "duration" -> options.duration = duration(value);
                    case "paced", "half-load" -> options.paced = duration(value);
                    case "loads" -> options.loads = Arrays.stream(value.split(",")).map(Double::parseDouble).toList();
                    case "connections" -> options.connections = Integer.parseInt(value);
                    case "keys" -> options.keys = Integer.parseInt(value);
                    case "cases" -> options.cases = Arrays.stream(value.split(",")).map(Case::of).toList();
                    case "out" -> options.out = Path.of(value);
                    case "no-tools" -> options.tools = false;
                    case "quick" -> {
                        options.rounds = 1;
                        options.warmup = Duration.ofSeconds(2);
                        options.warmupMax = Duration.ofSeconds(2);
                        options.warmupSlice = Duration.ofSeconds(1);
                        options.duration = Duration.ofSeconds(3);
                        options.paced = Duration.ofSeconds(2);
                    }
                    default -> throw new IllegalArgumentException("unknown option " + arg);
                }
            }
            String jvm = System.getenv("BENCH_GATEWAY_JVM_ARGS");
            options.jvmArgs = jvm == null || jvm.isBlank() ? List.of() : List.of(jvm.trim().split("\\s+"));
            return options;
        }

        private static Duration duration(String value) {
            return Duration.ofMillis(Math.round(Double.parseDouble(value.replace("s", "")) * 1000));
        }

        String describe() {
            return String.format(Locale.ROOT, "%d round(s) of each layout (%s), interleaved; each case: warm-up "
                    + "of at least %d s and the compilers are idle and three %d s slices agree within %.0f %% (at most "
                    + "%d s), %d s measured at %d connections (allowed path: %d random API keys under a limit none "
                    + "reaches; refused path: one key at %d/s), then %d s of the allowed path at each of %s of the "
                    + "limiter-off rate of the same round and layout (paced: random pauses between requests). Gateways: "
                    + "java -Xms512m -Xmx512m -jar bench-gateway.jar (WebFlux) or bench-gateway-mvc.jar (Gateway Server "
                    + "MVC, Tomcat, platform threads)%s. %s",
                    rounds, layouts(), warmup.toSeconds(), warmupSlice.toSeconds(), STEADY * 100,
                    warmupMax.toSeconds(),
                    duration.toSeconds(), connections, keys, BenchGateway.DENY_RATE,
                    paced.toSeconds(), loads.stream().map(share -> Math.round(share * 100) + " %")
                            .collect(java.util.stream.Collectors.joining(", ")),
                    jvmArgs.isEmpty() ? "" : " " + String.join(" ", jvmArgs), environment)
                    + (skipped.isEmpty() ? "" : " " + skipped);
        }

        private String layouts() {
            return layouts.stream()
                    .map(layout -> layout.id + (placements.containsKey(layout) ? ": " + placements.get(layout) : ""))
                    .collect(java.util.stream.Collectors.joining("; "));
        }
    }
}

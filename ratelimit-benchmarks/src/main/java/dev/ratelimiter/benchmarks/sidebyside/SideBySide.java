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

import dev.ratelimiter.benchmarks.sidebyside.BenchGateway.Case;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;

/**
 * The limiters side by side, measured as users deploy them: each case is the bench gateway's fat jar started with
 * {@code java -Xms512m -Xmx512m -jar} (default JIT and GC), one at a time, against one Redis on this machine and an
 * upstream answering {@code ok} (nginx when installed), driven by wrk (when installed) at a fixed number of
 * connections. Per case: the allowed path (1,000 random API keys under a limit none reaches) and the refused path (one
 * key at 10/s), each after a warm-up; then the latency at half the rate at which the gateway without limiter
 * saturated in the same round (an open loop). Rounds run every case in turn, and ratios to "limiter off" are taken
 * within a round: on a shared machine, only those compare.
 *
 * <pre>
 * java -cp ratelimit-benchmarks/target/benchmarks.jar dev.ratelimiter.benchmarks.sidebyside.SideBySide
 *     [--rounds=2] [--warmup=8s] [--duration=15s] [--connections=32] [--keys=1000]
 *     [--cases=off,scg-redis,scg-bucket4j,exact,local] [--half-load=10s] [--quick] [--out=target/side-by-side]
 * </pre>
 * {@code BENCH_GATEWAY_JVM_ARGS} adds JVM arguments to every gateway (e.g. a flight recording).
 */
public final class SideBySide {

    /** One case in one round. */
    record Measured(Case limiter, int round, LoadResult allow, LoadResult deny, LoadResult halfLoad,
            CommandStats allowRedis, CommandStats denyRedis, long fallbackDecisions) {
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
        Path jar = BenchGateway.locateJar();
        List<Measured> results = new ArrayList<>();
        try (RedisServer redis = RedisServers.start(); Upstream upstream = Upstream.start(out, options.tools)) {
            ClosedLoop load = new ClosedLoop(out, options.tools);
            options.environment = redis.description() + "; upstream " + upstream.description() + "; load "
                    + load.description();
            System.out.println("Side by side: " + options.environment);
            for (int round = 1; round <= options.rounds; round++) {
                Map<Case, Measured> thisRound = new EnumMap<>(Case.class);
                for (Case limiter : options.cases) {
                    redis.command("FLUSHALL");
                    Measured measured = measure(limiter, round, jar, redis, upstream, load, options,
                            thisRound.get(Case.OFF), out);
                    thisRound.put(limiter, measured);
                    results.add(measured);
                    System.out.printf(Locale.ROOT, "round %d %-13s allow %8.0f req/s p99 %6.2f ms errors %d | deny %8.0f req/s"
                            + " errors %d | half load p99 %s | scripts/request %.3f%n", round, limiter.id,
                            measured.allow.requestsPerSecond(), measured.allow.p99Millis(), measured.allow.errors(),
                            measured.deny.requestsPerSecond(), measured.deny.errors(), measured.halfLoad == null ? "-"
                                    : String.format(Locale.ROOT, "%.2f ms", measured.halfLoad.p99Millis()),
                            (double) measured.allowRedis.scriptCalls() / Math.max(1, measured.allow.requests()));
                }
            }
        }
        return results;
    }

    private static Measured measure(Case limiter, int round, Path jar, RedisServer redis, Upstream upstream,
            ClosedLoop load, Options options, Measured off, Path out) {
        try (BenchGateway gateway = new BenchGateway(jar, limiter, redis.url(), upstream.uri(), options.jvmArgs,
                out.resolve("logs"))) {
            String allowUrl = gateway.baseUrl() + "/bench/x";
            String denyUrl = gateway.baseUrl() + "/deny/x";
            load.run(allowUrl, options.connections, options.warmup, options.keys);
            long fallbackBefore = gateway.fallbackDecisions();
            CommandStats before = CommandStats.of(redis);
            LoadResult allow = load.run(allowUrl, options.connections, options.duration, options.keys);
            CommandStats allowRedis = CommandStats.of(redis).minus(before);
            long fallbacks = gateway.fallbackDecisions() - fallbackBefore;
            load.run(denyUrl, options.connections, Duration.ofSeconds(Math.min(3, options.warmup.toSeconds())), 1);
            before = CommandStats.of(redis);
            LoadResult deny = load.run(denyUrl, options.connections, options.duration, 1);
            CommandStats denyRedis = CommandStats.of(redis).minus(before);
            double halfRate = (off != null ? off.allow : allow).requestsPerSecond() / 2;
            LoadResult halfLoad = null;
            if (!options.halfLoad.isZero()) {
                // The open loop's client lives in this JVM: a few seconds first, so that its own warm-up (JIT,
                // connection pool) is not measured as the first case's latency (seconds of p99 before).
                OpenLoop.run(allowUrl, halfRate, Duration.ofSeconds(3), options.keys);
                halfLoad = OpenLoop.run(allowUrl, halfRate, options.halfLoad, options.keys);
            }
            return new Measured(limiter, round, allow, deny, halfLoad, allowRedis, denyRedis, fallbacks);
        }
    }

    /** Command-line options. */
    static final class Options {

        int rounds = 2;
        Duration warmup = Duration.ofSeconds(8);
        Duration duration = Duration.ofSeconds(15);
        Duration halfLoad = Duration.ofSeconds(10);
        int connections = 32;
        int keys = 1000;
        List<Case> cases = List.of(Case.values());
        Path out = Path.of("target/side-by-side");
        boolean tools = true;
        List<String> jvmArgs = List.of();
        String environment = "";

        static Options parse(String[] args) {
            Options options = new Options();
            for (String arg : args) {
                String[] pair = arg.replaceFirst("^--", "").split("=", 2);
                String value = pair.length > 1 ? pair[1] : "";
                switch (pair[0]) {
                    case "rounds" -> options.rounds = Integer.parseInt(value);
                    case "warmup" -> options.warmup = duration(value);
                    case "duration" -> options.duration = duration(value);
                    case "half-load" -> options.halfLoad = duration(value);
                    case "connections" -> options.connections = Integer.parseInt(value);
                    case "keys" -> options.keys = Integer.parseInt(value);
                    case "cases" -> options.cases = Arrays.stream(value.split(",")).map(Case::of).toList();
                    case "out" -> options.out = Path.of(value);
                    case "no-tools" -> options.tools = false;
                    case "quick" -> {
                        options.rounds = 1;
                        options.warmup = Duration.ofSeconds(2);
                        options.duration = Duration.ofSeconds(3);
                        options.halfLoad = Duration.ofSeconds(2);
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
            return String.format(Locale.ROOT, "%d round(s); each case: warm-up %d s, %d s measured at %d connections "
                    + "(allowed path: %d random API keys under a limit none reaches; refused path: one key at %d/s), "
                    + "then %d s at half the limiter-off rate (open loop). Gateways: java -Xms512m -Xmx512m -jar "
                    + "bench-gateway.jar%s. %s", rounds, warmup.toSeconds(), duration.toSeconds(), connections, keys,
                    BenchGateway.DENY_RATE, halfLoad.toSeconds(), jvmArgs.isEmpty() ? "" : " " + String.join(" ",
                            jvmArgs), environment);
        }
    }
}

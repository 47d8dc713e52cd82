package dev.ratelimiter.benchmarks.sidebyside;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import dev.ratelimiter.testsupport.LoopbackPorts;

/**
 * One gateway as a user deploys it: {@code java -Xms512m -Xmx512m -jar bench-gateway.jar} (or
 * {@code bench-gateway-mvc.jar}), default JIT and GC, its limiter chosen by the case. Ready once its management health
 * answers 200.
 */
final class BenchGateway implements AutoCloseable {

    /**
     * The limiters compared, in the order each round runs them: the WebFlux gateway's five, then the Gateway Server
     * MVC gateway's three (its own limiter-off, the baseline its ratios are taken against).
     */
    enum Case {
        OFF("off", "limiter off", false, null),
        SCG_REDIS("scg-redis", "Spring Cloud Gateway RequestRateLimiter + RedisRateLimiter", false, null),
        SCG_BUCKET4J("scg-bucket4j", "SCG RequestRateLimiter + Bucket4jRateLimiter (bucket4j_jdk17-lettuce)", false,
                null),
        EXACT("exact", "ours, exact", false, "exact"),
        LOCAL("local", "ours, store-mode local", false, "local"),
        /**
         * {@link #EXACT} without its observations (which the bench gateway has by default: the starter's actuator
         * makes an ObservationRegistry with the meter handler): their cost, side by side. Run only when asked for.
         */
        EXACT_UNOBSERVED("exact-unobserved", "ours, exact, ratelimit.observations.enabled=false", false, "exact"),
        MVC_OFF("mvc-off", "Gateway Server MVC, limiter off", true, null),
        MVC_EXACT("mvc-exact", "Gateway Server MVC, ours, exact", true, "exact"),
        MVC_LOCAL("mvc-local", "Gateway Server MVC, ours, store-mode local", true, "local");

        final String id;
        final String label;
        /** Runs the Gateway Server MVC bench gateway, not the WebFlux one. */
        final boolean mvc;
        /** Our limiter's store mode; null: not ours. */
        final String storeMode;

        Case(String id, String label, boolean mvc, String storeMode) {
            this.id = id;
            this.label = label;
            this.mvc = mvc;
            this.storeMode = storeMode;
        }

        boolean ours() {
            return storeMode != null;
        }

        /** The limiter-off case of the same gateway: what this case's ratios are to. */
        Case baseline() {
            return mvc ? MVC_OFF : OFF;
        }

        /** The cases a run takes unless {@code --cases} names others: all but the opt-in {@link #EXACT_UNOBSERVED}. */
        static List<Case> defaults() {
            return java.util.Arrays.stream(values()).filter(limiter -> limiter != EXACT_UNOBSERVED).toList();
        }

        static Case of(String id) {
            for (Case candidate : values()) {
                if (candidate.id.equals(id)) {
                    return candidate;
                }
            }
            throw new IllegalArgumentException("unknown case '" + id + "'; cases are off, scg-redis, scg-bucket4j, "
                    + "exact, local, mvc-off, mvc-exact, mvc-local, exact-unobserved");
        }
    }

    /**
     * What the bench gateway is told of the case: ours by store mode only (a variant of ours, such as
     * {@link Case#EXACT_UNOBSERVED}, differs in its ratelimit.* settings, not in the gateway's routes).
     */
    private static String gatewayLimiter(Case limiter) {
        return limiter.ours() ? limiter.storeMode : limiter.id;
    }

    /** The refused path's limit: one client at 10 requests per second, bursts of 10. */
    static final int DENY_RATE = 10;

    private final Process process;
    private final int port;
    private final int management;
    private final Path log;

    /**
     * {@code launcher}: what goes before {@code java} ({@code taskset -c 0} pins the gateway; taskset execs java, so
     * the process started is the gateway's JVM itself and {@link #cpu()} reads its own time).
     */
    BenchGateway(List<String> launcher, Path jar, Case limiter, String redisUrl, String upstream,
            List<String> jvmArgs, Path logDir) {
        this.port = freePort();
        this.management = freePort();
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xms512m",
                "-Xmx512m"));
        command.addAll(jvmArgs);
        command.addAll(List.of("-jar", jar.toString(), "--server.port=" + port, "--server.address=127.0.0.1",
                "--management.server.port=" + management, "--spring.data.redis.url=" + redisUrl,
                "--bench.upstream=" + upstream, "--bench.limiter=" + gatewayLimiter(limiter),
                "--bench.deny-rate=" + DENY_RATE));
        if (limiter.ours()) {
            String mode = limiter.storeMode;
            command.addAll(List.of("--ratelimit.enabled=true", "--ratelimit.store.type=redis",
                    "--ratelimit.default-tier=free",
                    // the load's keys are listed nowhere: clients of the free tier, as the peers count them
                    "--ratelimit.api-key.unknown.policy=default-tier",
                    // the allowed path: a bucket per client that no client empties
                    "--ratelimit.tiers.free.limits.default.capacity=1000000000",
                    "--ratelimit.tiers.free.limits.default.refill-tokens=1000000000",
                    "--ratelimit.tiers.free.limits.default.refill-period=1s",
                    "--ratelimit.tiers.free.limits.default.store-mode=" + mode,
                    // the refused path, as the peers have it on /deny/**
                    "--ratelimit.rules.deny-route.group=tier-default",
                    "--ratelimit.rules.deny-route.match.route-ids=deny",
                    "--ratelimit.rules.deny-route.capacity=" + DENY_RATE,
                    "--ratelimit.rules.deny-route.refill-tokens=" + DENY_RATE,
                    "--ratelimit.rules.deny-route.refill-period=1s",
                    "--ratelimit.rules.deny-route.store-mode=" + mode));
            if (limiter == Case.EXACT_UNOBSERVED) {
                command.add("--ratelimit.observations.enabled=false");
            }
        }
        try {
            Files.createDirectories(logDir);
            this.log = logDir.resolve("gateway-" + limiter.id + "-" + System.nanoTime() + ".log");
            this.process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        awaitReady(management, Duration.ofSeconds(90));
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    /** The gateway JVM's CPU time so far, all its threads ({@code /proc/<pid>/stat}). */
    ProcessCpu cpu() {
        return ProcessCpu.of(process.pid());
    }

    /** Decisions our limiter made without the store so far (from {@code /actuator/ratelimit}); 0 for the others. */
    long fallbackDecisions() {
        try {
            HttpResponse<String> view = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + management + "/actuator/ratelimit")).timeout(Duration.ofSeconds(5))
                    .build(), HttpResponse.BodyHandlers.ofString());
            var matcher = java.util.regex.Pattern.compile("\"fallbackDecisions\":([0-9]+)").matcher(view.body());
            return view.statusCode() == 200 && matcher.find() ? Long.parseLong(matcher.group(1)) : 0;
        }
        catch (IOException ex) {
            return 0;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    /**
     * Nanoseconds the gateway's JIT compilers have spent so far ({@code java.ci.totalTime}, {@code sun.ci.totalTime}
     * before JDK 17, through {@code jcmd PerfCounter.print}), or -1 when that cannot be read.
     */
    long compileNanos() {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        if (!Files.isExecutable(jcmd)) {
            return -1;
        }
        Path output = log.resolveSibling(log.getFileName() + ".perf");
        try {
            // to a file, and waited for with a bound: a jcmd that hangs must not hang the run
            Process probe = new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "PerfCounter.print")
                    .redirectErrorStream(true).redirectOutput(output.toFile()).start();
            if (!probe.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
                probe.destroyForcibly();
                return -1;
            }
            long ticks = -1;
            long frequency = 1_000_000_000L;
            for (String line : Files.readAllLines(output)) {
                if (line.startsWith("java.ci.totalTime=") || line.startsWith("sun.ci.totalTime=")) {
                    ticks = Long.parseLong(line.substring(line.indexOf('=') + 1).trim());
                }
                else if (line.startsWith("sun.os.hrt.frequency=")) {
                    frequency = Long.parseLong(line.substring(line.indexOf('=') + 1).trim());
                }
            }
            return ticks < 0 ? -1 : (long) (ticks * (1e9 / frequency));
        }
        catch (IOException | RuntimeException ex) {
            return -1;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /**
     * Finds a bench gateway's jar: property {@code bench.gateway.jar} ({@code bench.gateway.mvc.jar} for the MVC
     * gateway), else {@code ratelimit-bench-gateway/target} ({@code ratelimit-bench-gateway-mvc/target}).
     */
    static Path locateJar(boolean mvc) {
        String property = mvc ? "bench.gateway.mvc.jar" : "bench.gateway.jar";
        String module = mvc ? "ratelimit-bench-gateway-mvc" : "ratelimit-bench-gateway";
        String name = mvc ? "bench-gateway-mvc.jar" : "bench-gateway.jar";
        String configured = System.getProperty(property, System.getenv(mvc ? "BENCH_GATEWAY_MVC_JAR"
                : "BENCH_GATEWAY_JAR"));
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        for (String dir : List.of(module + "/target", "../" + module + "/target")) {
            Path jar = Path.of(dir, name);
            if (Files.isRegularFile(jar)) {
                return jar.toAbsolutePath().normalize();
            }
        }
        throw new IllegalStateException("No " + name + " in " + module + "/target (working directory "
                + Path.of("").toAbsolutePath() + "). Build it first: ./mvnw -pl ratelimit-benchmarks -am package "
                + "-DskipTests, or pass -D" + property + "=<path>.");
    }

    private void awaitReady(int management, Duration max) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + max.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the gateway exited at start; see " + log + ":\n" + tail());
            }
            try {
                HttpResponse<String> health = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + management + "/actuator/health"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (health.statusCode() == 200) {
                    return;
                }
            }
            catch (IOException notYet) {
                // starting
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
            sleep(100);
        }
        close();
        throw new IllegalStateException("the gateway did not become ready within " + max + "; see " + log);
    }

    private String tail() {
        try (Stream<String> lines = Files.lines(log)) {
            List<String> all = lines.toList();
            return String.join("\n", all.subList(Math.max(0, all.size() - 30), all.size()));
        }
        catch (IOException ex) {
            return "(no log: " + ex + ")";
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    static int freePort() {
        return LoopbackPorts.free();
    }

    static Optional<Path> onPath(String binary) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(dir, binary);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        for (String dir : List.of("/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin")) {
            Path candidate = Path.of(dir, binary);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}

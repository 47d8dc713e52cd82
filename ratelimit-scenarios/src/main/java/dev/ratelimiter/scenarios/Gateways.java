package dev.ratelimiter.scenarios;

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
import java.util.stream.IntStream;
import java.util.stream.Stream;

import dev.ratelimiter.testsupport.LoopbackPorts;

/**
 * N sample-gateway instances, each a separate {@code java -jar sample-gateway.jar} process configured by command-line
 * arguments: one limiter's instances sharing one Redis and one upstream, or (the regions scenario) instances with
 * arguments of their own. Started in parallel; ready when every {@code /actuator/health} answers 200.
 */
final class Gateways implements AutoCloseable {

    /** Which limiter the gateways run. */
    enum Mode {
        OFF("limiter off"), SCG("SCG RequestRateLimiter + RedisRateLimiter"), EXACT("ours, exact"),
        LOCAL("ours, local");

        final String label;

        Mode(String label) {
            this.label = label;
        }
    }

    private final List<Process> processes = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();
    private final List<Integer> managementPorts = new ArrayList<>();
    private final Thread shutdownHook = new Thread(this::destroy, "scenario-gateways-shutdown");
    private final long started = System.nanoTime();
    private double startupSeconds;

    /** The command-line arguments of instance {@code index}, given the ports chosen for it. */
    @FunctionalInterface
    interface InstanceArguments {
        List<String> of(int index, int port, int managementPort);
    }

    /** {@code instances} gateways of one limiter, all on one Redis; ours are checked to run the runner's rules. */
    Gateways(Path jar, int instances, Mode mode, Limits limits, String redisUrl, String upstreamUri, Path logDir) {
        this(jar, IntStream.range(0, instances).mapToObj(i -> mode.name().toLowerCase() + "-" + i).toList(),
                (i, port, management) -> arguments(mode, limits, port, management, redisUrl, upstreamUri), logDir);
        if (mode == Mode.EXACT || mode == Mode.LOCAL) {
            try {
                requireRulesInForce(mode == Mode.LOCAL ? "LOCAL" : "EXACT");
            }
            catch (RuntimeException ex) {
                close();
                throw ex;
            }
        }
    }

    /**
     * One gateway per name, each with arguments of its own (its log is {@code gateway-<name>.log}), started in
     * parallel; ready when every one answers its health endpoint.
     */
    Gateways(Path jar, List<String> names, InstanceArguments arguments, Path logDir) {
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        try {
            for (int i = 0; i < names.size(); i++) {
                int port = freePort();
                int management = freePort();
                // C1 only, for every limiter alike: with the default JIT, C2 compiling in two gateways for their
                // first minute starved this 2-core machine (SCG's honest p50 57 ms, 7 % errors in one try)
                List<String> command = new ArrayList<>(List.of(javaBinary(), "-Xms64m", "-Xmx256m",
                        "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"));
                // e.g. a profiler: SCENARIOS_GATEWAY_JVM_ARGS="-XX:StartFlightRecording=filename=/tmp/jfr/"
                command.addAll(fromEnvironment("SCENARIOS_GATEWAY_JVM_ARGS"));
                command.addAll(List.of("-jar", jar.toString()));
                command.addAll(arguments.of(i, port, management));
                // e.g. SCENARIOS_GATEWAY_ARGS="--ratelimit.events.log=true" to see every decision in the gateways' logs
                command.addAll(fromEnvironment("SCENARIOS_GATEWAY_ARGS"));
                Path log = logDir.resolve("gateway-" + names.get(i) + ".log");
                Files.createDirectories(logDir);
                processes.add(new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(log.toFile()).start());
                ports.add(port);
                managementPorts.add(management);
            }
            awaitReady(Duration.ofSeconds(120), logDir);
            startupSeconds = (System.nanoTime() - started) / 1e9;
        }
        catch (IOException ex) {
            close();
            throw new UncheckedIOException(ex);
        }
        catch (RuntimeException ex) {
            close();
            throw ex;
        }
    }

    static List<String> arguments(Mode mode, Limits limits, int port, int management, String redisUrl,
            String upstreamUri) {
        List<String> args = processArguments(port, management, redisUrl, upstreamUri);
        if (mode == Mode.OFF || mode == Mode.SCG) {
            args.add("--ratelimit.enabled=false");
        }
        if (mode == Mode.SCG) {
            args.add("--demo.gateway-rate-limiter.replenish-rate=" + limits.quota());
            args.add("--demo.gateway-rate-limiter.burst-capacity=" + limits.quota());
        }
        if (mode == Mode.EXACT || mode == Mode.LOCAL) {
            String storeMode = mode == Mode.LOCAL ? "local" : "exact";
            args.addAll(List.of("--ratelimit.store.type=redis",
                    // exact and local gateways are up at once in the side by side: apart in Redis, so that neither
                    // counts the other's instances when sizing its fallback share
                    "--ratelimit.store.key-prefix=rl-" + storeMode,
                    // 5 ms (the default) assumes a Redis with cores of its own; here it shares 2 cores with the
                    // gateways and the load, and a timed-out decision falls back to the instance's share
                    "--ratelimit.store.timeout=" + limits.storeTimeout().toMillis() + "ms",
                    // the client quota of the seeds, scaled: Q per second, bursts of up to Q
                    // the scenarios' clients are free-tier keys that no tier lists: clients like any other here,
                    // not the sample's unknown keys sharing one bucket per address
                    "--ratelimit.api-key.unknown.policy=default-tier",
                    "--ratelimit.tiers.free.limits.default.capacity=" + limits.quota(),
                    "--ratelimit.tiers.free.limits.default.refill-tokens=" + limits.quota(),
                    "--ratelimit.tiers.free.limits.default.refill-period=1s",
                    "--ratelimit.tiers.free.limits.default.store-mode=" + storeMode,
                    // the same limit as SCG's limiter gets: the sample's hourly quota (always exact) switched off
                    "--ratelimit.rules.free-hourly.enabled=false",
                    "--ratelimit.tiers.pro.api-keys=demo-pro," + Scenarios.EDGE_KEY,
                    "--ratelimit.tiers.pro.limits.default.capacity=100000",
                    "--ratelimit.tiers.pro.limits.default.refill-tokens=100000",
                    "--ratelimit.tiers.pro.limits.default.store-mode=" + storeMode,
                    // per-endpoint cap: /login as a whole, summed over every client
                    "--ratelimit.rules.login-cap.match.route-ids=demo-login",
                    "--ratelimit.rules.login-cap.key=route",
                    "--ratelimit.rules.login-cap.capacity=" + limits.loginCap(),
                    "--ratelimit.rules.login-cap.refill-tokens=" + limits.loginCap(),
                    "--ratelimit.rules.login-cap.refill-period=1s",
                    // window edge: a sliding-window quota for one client
                    "--ratelimit.rules.edge-window.match.api-keys=" + Scenarios.EDGE_KEY,
                    "--ratelimit.rules.edge-window.algorithm=sliding-window",
                    "--ratelimit.rules.edge-window.limit=" + limits.windowLimit(),
                    "--ratelimit.rules.edge-window.window=" + limits.window().toMillis() + "ms",
                    // load shedding is not a rate limit and SCG's limiter has none: off, so that both compare the
                    // same work (on a starved 2-core machine it would also shed honest requests as the gateways slow)
                    "--ratelimit.shedding.enabled=false",
                    // the slow endpoint: the sample's own rule, at most 2 reports in progress per client
                    "--ratelimit.rules.reports-in-progress.max-in-progress=2"));
        }
        return args;
    }

    /** What every gateway is given whatever it limits: its ports on loopback, its Redis, the stub upstream, quiet logs. */
    static List<String> processArguments(int port, int management, String redisUrl, String upstreamUri) {
        return new ArrayList<>(List.of("--server.port=" + port, "--server.address=127.0.0.1",
                "--management.server.port=" + management, "--spring.data.redis.url=" + redisUrl,
                "--demo.upstream.uri=" + upstreamUri, "--spring.main.banner-mode=off",
                "--logging.level.root=WARN", "--logging.level.dev.ratelimiter=WARN"));
    }

    /** Space-separated arguments from an environment variable, none when it is unset. */
    private static List<String> fromEnvironment(String variable) {
        String value = System.getenv(variable);
        return value == null || value.isBlank() ? List.of() : List.of(value.trim().split("\\s+"));
    }

    private void awaitReady(Duration timeout, Path logDir) {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int i = 0; i < processes.size(); i++) {
            while (true) {
                if (!processes.get(i).isAlive()) {
                    throw new IllegalStateException("gateway " + i + " exited with " + processes.get(i).exitValue()
                            + " before it was ready; see its log in " + logDir);
                }
                if (healthy(client, managementPorts.get(i))) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("gateway " + i + " not ready after " + timeout + "; see " + logDir);
                }
                sleep(250);
            }
        }
    }

    /**
     * Reads the rules in force from each instance's {@code /actuator/ratelimit}: a setting the gateway ignored would
     * otherwise measure something else than the table says (it happened: a tier's store-mode was once ignored).
     */
    private void requireRulesInForce(String storeMode) {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        for (int management : managementPorts) {
            String view;
            try {
                view = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management
                        + "/actuator/ratelimit")).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
            int rule = view.indexOf("\"free.default\":");
            int mode = rule < 0 ? -1 : view.indexOf("\"storeMode\":\"", rule);
            String actual = mode < 0 ? "missing" : view.substring(mode + 13, view.indexOf('"', mode + 13));
            if (!storeMode.equals(actual) || view.contains("\"free-hourly\":")) {
                throw new IllegalStateException("gateway on management port " + management + " does not run the "
                        + "runner's rules (free.default storeMode " + actual + ", expected " + storeMode
                        + "; free-hourly must be off): " + view);
            }
        }
    }

    /** Whether instance {@code i} answers its health endpoint (any status) within two seconds. */
    boolean answersHealth(int i) {
        try {
            HttpResponse<Void> response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build()
                    .send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPorts.get(i)
                            + "/actuator/health")).timeout(Duration.ofSeconds(2)).build(),
                            HttpResponse.BodyHandlers.discarding());
            return response.statusCode() > 0;
        }
        catch (IOException ex) {
            return false;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static boolean healthy(HttpClient client, int managementPort) {
        try {
            HttpResponse<Void> response = client.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + managementPort + "/actuator/health"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
            return response.statusCode() == 200;
        }
        catch (IOException ex) {
            return false;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** From the first process started until every instance answered its health endpoint. */
    double startupSeconds() {
        return startupSeconds;
    }

    List<Integer> ports() {
        return ports;
    }

    int size() {
        return processes.size();
    }

    boolean allAlive() {
        return processes.stream().allMatch(Process::isAlive);
    }

    private void destroy() {
        for (Process process : processes) {
            process.destroy();
        }
        for (Process process : processes) {
            try {
                if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
                }
            }
            catch (InterruptedException ex) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        destroy();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        }
        catch (IllegalStateException ex) {
            // shutting down already
        }
    }

    /** Finds the sample gateway's runnable jar: property {@code scenarios.gateway.jar}, else sample-gateway/target. */
    static Path locateJar() {
        String configured = System.getProperty("scenarios.gateway.jar", System.getenv("SCENARIOS_GATEWAY_JAR"));
        if (configured != null && !configured.isBlank()) {
            Path jar = Path.of(configured);
            if (!Files.isRegularFile(jar)) {
                throw new IllegalStateException("scenarios.gateway.jar=" + configured + " is not a file");
            }
            return jar;
        }
        for (String dir : List.of("sample-gateway/target", "../sample-gateway/target")) {
            Optional<Path> jar = findJar(Path.of(dir));
            if (jar.isPresent()) {
                return jar.get().toAbsolutePath().normalize();
            }
        }
        throw new IllegalStateException("No sample-gateway jar in sample-gateway/target or ../sample-gateway/target "
                + "(working directory " + Path.of("").toAbsolutePath() + "). Build it first: "
                + "./mvnw -pl sample-gateway -am package -DskipTests, or pass -Dscenarios.gateway.jar=<path>.");
    }

    private static Optional<Path> findJar(Path dir) {
        if (!Files.isDirectory(dir)) {
            return Optional.empty();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().matches("sample-gateway.*\\.jar"))
                    .filter(p -> !p.getFileName().toString().contains("sources"))
                    .filter(p -> {
                        try {
                            return Files.size(p) > 1_000_000;
                        }
                        catch (IOException ex) {
                            return false;
                        }
                    })
                    .findFirst();
        }
        catch (IOException ex) {
            return Optional.empty();
        }
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    static int freePort() {
        return LoopbackPorts.free();
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

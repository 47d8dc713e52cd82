package dev.ratelimiter.scenarios;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.scenarios.Gateways.Mode;

/**
 * The command line of a sample gateway process (either {@link Flavour}): the JVM's options, what every gateway is
 * given (ports, Redis, upstream, quiet logs), and the rules one limiter runs with, all as {@code --name=value}
 * arguments.
 */
final class GatewayArguments {

    private GatewayArguments() {
    }

    /**
     * The whole command: {@code java}, its options, {@code -jar jar}, then {@code instanceArguments}; the
     * environment's {@code SCENARIOS_GATEWAY_JVM_ARGS} and {@code SCENARIOS_GATEWAY_ARGS} added to each side.
     */
    static List<String> command(Path jar, List<String> instanceArguments) {
        // C1 only, for every limiter alike: with the default JIT, C2 compiling in two gateways for their
        // first minute starved this 2-core machine (SCG's honest p50 57 ms, 7 % errors in one try).
        // The first metadata collection is put off to 128 MB of metaspace: each gateway of the MVC noisy story
        // (-Xlog:gc) otherwise ran two or three Full GCs for "Metadata GC Threshold" (47-247 ms), and a pause longer
        // than the store timeout (100 ms) times out the decisions in flight and may open the store's circuit breaker:
        // the instance then decides from its fallback share for a while (the noisy stories allow for it, measured:
        // FallbackAllowance). The heap still starts small: started at its 256 MB maximum, the one young collection
        // under a story's traffic copied all the warm-up's survivors at once (0.1-1.1 s) and the story failed more
        // often (7 runs in 13, against 1 in 9, alternated on a shared machine).
        List<String> command = new ArrayList<>(List.of(javaBinary(), "-Xms64m", "-Xmx256m",
                "-XX:MetaspaceSize=128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"));
        // e.g. a profiler: SCENARIOS_GATEWAY_JVM_ARGS="-XX:StartFlightRecording=filename=/tmp/jfr/"
        command.addAll(fromEnvironment("SCENARIOS_GATEWAY_JVM_ARGS"));
        command.addAll(List.of("-jar", jar.toString()));
        command.addAll(instanceArguments);
        // e.g. SCENARIOS_GATEWAY_ARGS="--ratelimit.events.log=true" to see every decision in the gateways' logs
        command.addAll(fromEnvironment("SCENARIOS_GATEWAY_ARGS"));
        return command;
    }

    /** The arguments of a WebFlux sample gateway running {@code mode}'s limiter with the runner's rules. */
    static List<String> of(Mode mode, Limits limits, int port, int management, String redisUrl,
            String upstreamUri) {
        return of(Flavour.WEBFLUX, mode, limits, port, management, redisUrl, upstreamUri);
    }

    /**
     * The arguments of a {@code flavour} sample gateway running {@code mode}'s limiter with the runner's rules: the
     * same for both flavours but for the name of the {@code /login/**} route.
     */
    static List<String> of(Flavour flavour, Mode mode, Limits limits, int port, int management, String redisUrl,
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
                    "--ratelimit.rules.login-cap.match.route-ids=" + flavour.loginRouteId,
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

    /**
     * What every gateway is given whatever it limits: its ports on loopback (the management port too: the MVC flavour
     * refuses to start with its unauthenticated operator endpoints reachable beyond this host), its Redis, the stub
     * upstream, quiet logs. The sample's built-in upstream, unused here, takes a free port: several instances share
     * this host, and the MVC sample's default (9091) would let only one start.
     */
    static List<String> processArguments(int port, int management, String redisUrl, String upstreamUri) {
        return new ArrayList<>(List.of("--server.port=" + port, "--server.address=127.0.0.1",
                "--management.server.port=" + management, "--spring.data.redis.url=" + redisUrl,
                "--demo.upstream.uri=" + upstreamUri, "--management.server.address=127.0.0.1",
                "--demo.upstream.port=0", "--spring.main.banner-mode=off",
                "--logging.level.root=WARN", "--logging.level.dev.ratelimiter=WARN"));
    }

    /** Space-separated arguments from an environment variable, none when it is unset. */
    private static List<String> fromEnvironment(String variable) {
        String value = System.getenv(variable);
        return value == null || value.isBlank() ? List.of() : List.of(value.trim().split("\\s+"));
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}

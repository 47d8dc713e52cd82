package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The processes of a {@link RedisSentinel}: data nodes (a primary, replicas of it) and sentinels, each the same
 * {@code redis-server} binary with its own command line, started on a free port (again on another one if the
 * port was taken meanwhile).
 */
final class SentinelNodes {

    /** Redis 7 syncs replicas diskless by default and then waits 5 s for more replicas first; do not wait. */
    private static final List<String> DATA_OPTIONS = List.of("--repl-diskless-sync-delay", "0");

    private SentinelNodes() {
    }

    /** A data node that starts as a primary. */
    static RedisNode primary(RedisBinary.Choice binary) {
        return TopologyNodes.start(() -> dataNode(binary, List.of()));
    }

    /** A data node that starts as a replica of {@code primary}. */
    static RedisNode replicaOf(RedisBinary.Choice binary, RedisNode primary) {
        return TopologyNodes.start(() -> dataNode(binary,
                List.of("--replicaof", primary.host(), String.valueOf(primary.port()))));
    }

    /**
     * A sentinel monitoring the primary on {@code primaryPort} as {@code masterName}: down after 1 s, a failover
     * timing out after 3 s, {@code quorum} sentinels to agree.
     */
    static RedisNode sentinel(RedisBinary.Choice binary, String masterName, int primaryPort, int quorum) {
        String configuration = String.join("\n",
                "# Written once by RedisSentinel; the sentinel rewrites it with what it learns, and reads it on restart.",
                // Addresses stay IPs end to end: nothing to resolve, nothing that differs between Redis 6.2 and 7.
                "sentinel resolve-hostnames no",
                "sentinel announce-hostnames no",
                "sentinel monitor " + masterName + " " + LoopbackPorts.HOST + " " + primaryPort + " " + quorum,
                "sentinel down-after-milliseconds " + masterName + " 1000",
                "sentinel failover-timeout " + masterName + " 3000",
                "sentinel parallel-syncs " + masterName + " 1",
                "");
        return TopologyNodes.start(() -> new RedisNode(new ProcessRedisServer(binary.path(),
                binary.kind() + " sentinel", LoopbackPorts.free(), sentinelCommandLine(configuration)), false));
    }

    private static RedisNode dataNode(RedisBinary.Choice binary, List<String> replicaOf) {
        List<String> options = new ArrayList<>(DATA_OPTIONS);
        options.addAll(replicaOf);
        return new RedisNode(new ProcessRedisServer(binary.path(), binary.kind() + " data node", LoopbackPorts.free(),
                ProcessRedisServer.CommandLine.withOptions(options)), false);
    }

    /** {@code redis-server <sentinel.conf> <standard options> --sentinel}, the file written on the first start only. */
    private static ProcessRedisServer.CommandLine sentinelCommandLine(String configuration) {
        return (workingDirectory, standardOptions) -> {
            Path file = workingDirectory.resolve("sentinel.conf");
            try {
                if (!Files.exists(file)) {
                    Files.writeString(file, configuration);
                }
            }
            catch (IOException ex) {
                throw new UncheckedIOException("cannot write " + file, ex);
            }
            List<String> arguments = new ArrayList<>();
            arguments.add(file.toString());
            arguments.addAll(standardOptions);
            arguments.add("--sentinel");
            return arguments;
        };
    }
}

package dev.ratelimiter.benchmarks;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.benchmarks.sidebyside.CommandStats;
import dev.ratelimiter.testsupport.RedisCluster;
import dev.ratelimiter.testsupport.RedisNode;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;

/**
 * The Redis the simulated fleet shares: one server, or a cluster of 3 primaries (each with a replica), started the
 * way the tests start them, and the one Lettuce client every instance opens its own connection from — a cluster
 * client for a cluster, as the application's connection factory would give the limiter.
 */
final class FleetRedis implements AutoCloseable {

    private final FleetOptions.Topology topology;
    private final RedisServer server;
    private final RedisCluster cluster;
    private final AbstractRedisClient client;

    private FleetRedis(FleetOptions.Topology topology, RedisServer server, RedisCluster cluster,
            AbstractRedisClient client) {
        this.topology = topology;
        this.server = server;
        this.cluster = cluster;
        this.client = client;
    }

    static FleetRedis start(FleetOptions.Topology topology) {
        if (topology == FleetOptions.Topology.STANDALONE) {
            RedisServer server = RedisServers.start();
            return new FleetRedis(topology, server, null,
                    RedisClient.create(RedisURI.create(server.host(), server.port())));
        }
        RedisCluster cluster = RedisCluster.start();
        List<RedisURI> nodes = cluster.allNodes().stream().map(node -> RedisURI.create(node.host(), node.port()))
                .toList();
        return new FleetRedis(topology, null, cluster, RedisClusterClient.create(nodes));
    }

    FleetOptions.Topology topology() {
        return topology;
    }

    AbstractRedisClient client() {
        return client;
    }

    /** Whether scripts must be split by hash slot. */
    boolean cluster() {
        return cluster != null;
    }

    String description() {
        return cluster != null ? cluster.description() : server.description();
    }

    /** The servers that take writes, in slot order for a cluster. */
    List<RedisServer> primaries() {
        return cluster != null ? List.copyOf(cluster.primaries()) : List.of(server);
    }

    /** Each primary's figures now, in {@link #primaries()} order. */
    List<CommandStats> primaryStats() {
        return primaries().stream().map(CommandStats::of).toList();
    }

    /** CPU the replicas used so far (they share the machine): 0 without a cluster. */
    long replicaCpuMicros() {
        return cluster == null ? 0 : cluster.replicas().stream().map(CommandStats::of)
                .mapToLong(CommandStats::cpuMicros).sum();
    }

    /** Empties every primary, so that a run starts from no buckets. */
    void flush() {
        if (cluster != null) {
            cluster.flushAll();
        }
        else {
            server.command("FLUSHALL");
        }
    }

    /** {@code host:port} of a primary, for the table. */
    static String address(RedisServer primary) {
        return primary instanceof RedisNode node ? node.address() : primary.host() + ":" + primary.port();
    }

    @Override
    public void close() {
        try {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        finally {
            if (cluster != null) {
                cluster.close();
            }
            else {
                server.close();
            }
        }
    }
}

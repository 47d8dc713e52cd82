package dev.ratelimiter.benchmarks;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

    /** Every running node's figures now, and which nodes are primaries. */
    Reading read() {
        List<RedisServer> nodes = cluster != null
                ? cluster.allNodes().stream().filter(RedisNode::isRunning).map(RedisServer.class::cast).toList()
                : List.of(server);
        Map<String, CommandStats> stats = new LinkedHashMap<>();
        nodes.forEach(node -> stats.put(address(node), CommandStats.of(node)));
        List<String> primaries = cluster != null ? cluster.primaries().stream().map(RedisNode::address).toList()
                : List.of(address(server));
        return new Reading(stats, primaries);
    }

    /**
     * Every node's figures at one moment, by address, and the primaries among them in slot order. Figures between
     * two readings are taken node by node: a failover (a primary too busy to answer the cluster in time is replaced
     * by its replica) changes which nodes are primaries, never whose figures are whose.
     */
    record Reading(Map<String, CommandStats> nodes, List<String> primaries) {

        /** What each primary of this reading did since {@code before}, in slot order. */
        List<CommandStats> primariesSince(Reading before) {
            return primaries.stream().map(node -> since(before, node)).toList();
        }

        /** What all the nodes did since {@code before}, summed. */
        CommandStats allSince(Reading before) {
            CommandStats total = CommandStats.NONE;
            for (String node : nodes.keySet()) {
                total = total.plus(since(before, node));
            }
            return total;
        }

        /** CPU the nodes that are not primaries now used since {@code before}. */
        long replicaCpuMicrosSince(Reading before) {
            return nodes.keySet().stream().filter(node -> !primaries.contains(node))
                    .mapToLong(node -> since(before, node).cpuMicros()).sum();
        }

        /** Whether other nodes are primaries than at {@code before}: a failover happened in between. */
        boolean failedOverSince(Reading before) {
            return !primaries.equals(before.primaries);
        }

        private CommandStats since(Reading before, String node) {
            return nodes.get(node).minus(before.nodes.getOrDefault(node, CommandStats.NONE));
        }
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

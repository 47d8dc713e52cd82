package dev.ratelimiter.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/**
 * How a {@link RedisCluster} comes together from plain processes, as {@code redis-cli --cluster create} would do
 * it (which the embedded-redis binary ships without): nodes started in cluster mode, slots split between the
 * primaries, every node introduced, replicas attached.
 */
final class ClusterFormation {

    /** Bounds each step of forming the cluster, and the health check that ends it. */
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static final int ADDSLOTS_BATCH = 1_000;

    /**
     * The cluster options of every node. A short node timeout makes failure detection and failover take
     * seconds, not the default 15 s. A validity factor of 0 lets a replica stand for election however long
     * it has been cut off from its primary, so a failover never stalls on replica "staleness". A diskless
     * sync delay of 0 stops Redis 7 (diskless by default) from waiting 5 s before the first sync of a replica.
     */
    private static final List<String> CLUSTER_OPTIONS = List.of(
            "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", "1000",
            "--cluster-replica-validity-factor", "0",
            "--repl-diskless-sync-delay", "0");

    private ClusterFormation() {
    }

    /** One node in cluster mode on a free port pair (the port and its cluster bus), not yet part of a cluster. */
    static RedisNode startNode(RedisBinary.Choice binary) {
        return TopologyNodes.start(() -> new RedisNode(new ProcessRedisServer(binary.path(),
                binary.kind() + " cluster node", LoopbackPorts.freeWithClusterBus(),
                ProcessRedisServer.CommandLine.withOptions(CLUSTER_OPTIONS)), true));
    }

    /**
     * Joins {@code nodes} into a cluster: the first {@code primaries} are given the slots, the rest replicate
     * them in that order. Returns once every replica was accepted; the caller then waits for health.
     */
    static void form(List<RedisNode> nodes, int primaries) {
        for (int i = 0; i < nodes.size(); i++) {
            // Distinct epochs from the start, as redis-cli does, so no epoch collision has to be resolved first.
            nodes.get(i).command("CLUSTER", "SET-CONFIG-EPOCH", String.valueOf(i + 1));
        }
        for (int i = 0; i < primaries; i++) {
            addSlots(nodes.get(i), i * ClusterSlots.COUNT / primaries, (i + 1) * ClusterSlots.COUNT / primaries - 1);
        }
        RedisNode introducer = nodes.get(0);
        for (RedisNode other : nodes.subList(1, nodes.size())) {
            introducer.command("CLUSTER", "MEET", other.host(), String.valueOf(other.port()));
        }
        awaitJoined(nodes);
        for (int i = 0; i < primaries; i++) {
            RedisNode primary = nodes.get(i);
            RedisNode replica = nodes.get(primaries + i);
            // Retried: right after the join a node may not yet have the primary in its table as a master.
            Await.until(TIMEOUT, replica.port() + " accepts CLUSTER REPLICATE " + primary.id(),
                    () -> "OK".equals(replica.command("CLUSTER", "REPLICATE", primary.id())) ? Boolean.TRUE : null);
        }
    }

    private static void awaitJoined(List<RedisNode> nodes) {
        int count = nodes.size();
        Await.until(TIMEOUT, "every node knows all " + count + " nodes and all slots are assigned", () -> {
            for (RedisNode node : nodes) {
                ClusterView view = ClusterView.parse(node.command("CLUSTER", "NODES"));
                Await.check(view.entries().size() == count && view.entries().stream().noneMatch(ClusterView.Entry::isUnhealthy)
                        && view.assignedSlots() == ClusterSlots.COUNT, node.port() + " sees " + view.summary());
                String state = ClusterObserver.clusterInfo(node).get("cluster_state");
                Await.check("ok".equals(state), node.port() + " has cluster_state:" + state);
            }
            return Boolean.TRUE;
        });
    }

    private static void addSlots(RedisNode node, int first, int last) {
        // Batches of slot numbers: CLUSTER ADDSLOTSRANGE only exists from Redis 7.0, the embedded binary is 6.2.
        for (int from = first; from <= last; from += ADDSLOTS_BATCH) {
            int to = Math.min(last, from + ADDSLOTS_BATCH - 1);
            List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
            IntStream.rangeClosed(from, to).mapToObj(String::valueOf).forEach(command::add);
            node.command(command.toArray(String[]::new));
        }
    }
}

package dev.ratelimiter.testsupport;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a {@link RedisCluster}'s nodes say about it ({@code CLUSTER INFO}, {@code CLUSTER NODES}), and the slots
 * each primary was last seen owning.
 */
final class ClusterObserver {

    private final List<RedisNode> nodes;
    /**
     * The slots each node owned when last seen as a primary: once a primary is dead and failed over, no view
     * lists its slots any more, yet {@link RedisCluster#awaitPromotion} must know which slots to find a new
     * owner for.
     */
    private final Map<String, List<int[]>> lastKnownSlots = new ConcurrentHashMap<>();

    ClusterObserver(List<RedisNode> nodes) {
        this.nodes = nodes;
    }

    /**
     * The view of the running node with the highest current epoch: a node just restarted still believes its
     * old configuration until it hears from the others, whereas every failover raises the epoch.
     */
    ClusterView currentView() {
        RedisNode asked = null;
        long highestEpoch = -1;
        for (RedisNode node : nodes) {
            if (node.isRunning()) {
                long epoch = Long.parseLong(clusterInfo(node).getOrDefault("cluster_current_epoch", "0"));
                if (epoch > highestEpoch) {
                    asked = node;
                    highestEpoch = epoch;
                }
            }
        }
        if (asked == null) {
            throw new IllegalStateException("no cluster node is running");
        }
        return observe(asked);
    }

    /** {@code node}'s view, remembering the slots of every primary it lists. */
    ClusterView observe(RedisNode node) {
        ClusterView view = ClusterView.parse(node.command("CLUSTER", "NODES"));
        view.mastersWithSlots().forEach(master -> lastKnownSlots.put(master.id(), master.slotRanges()));
        return view;
    }

    /** The slot ranges node {@code id} owned when last seen as a primary; empty if never seen so. */
    List<int[]> lastKnownSlots(String id) {
        return lastKnownSlots.getOrDefault(id, List.of());
    }

    static Map<String, String> clusterInfo(RedisNode node) {
        return RedisReplies.infoFields(node.command("CLUSTER", "INFO"));
    }

    /**
     * A text every node's view must produce identically when the cluster of {@code nodes} nodes is healthy
     * ({@code primaries} masters covering all slots, one replica each, nobody failing); or NotYet.
     */
    static String healthyTopology(ClusterView view, int nodes, int primaries) {
        Await.check(view.entries().size() == nodes, "a view with " + view.entries().size() + " nodes: " + view.summary());
        Await.check(view.entries().stream().noneMatch(ClusterView.Entry::isUnhealthy), "failing nodes: " + view.summary());
        List<ClusterView.Entry> masters = view.mastersWithSlots();
        Await.check(masters.size() == primaries && view.assignedSlots() == ClusterSlots.COUNT,
                "not " + primaries + " masters covering all slots: " + view.summary());
        StringBuilder topology = new StringBuilder();
        for (ClusterView.Entry master : masters) {
            List<ClusterView.Entry> replicas = view.replicasOf(master.id());
            Await.check(replicas.size() == 1, master.port() + " has " + replicas.size() + " replicas: " + view.summary());
            topology.append(master.id()).append('@').append(master.firstSlot()).append('<')
                    .append(replicas.get(0).id()).append(' ');
        }
        return topology.toString();
    }
}

package dev.ratelimiter.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Redis Cluster of 3 primaries and 3 replicas, each a {@code redis-server} child process on
 * 127.0.0.1, for tests of what a cluster does that a single server does not: keys spread over primaries by
 * hash slot, MOVED redirections, and a primary failing over to its replica.
 *
 * <p>No Docker and no {@code redis-cli}: the cluster is joined from Java (CLUSTER MEET, ADDSLOTS, REPLICATE),
 * because the embedded-redis fallback binary ships without {@code redis-cli}. The binary is chosen as for
 * {@link RedisServers} ({@code ratelimit.test.redis} = {@code path} or {@code embedded}; otherwise PATH, then
 * embedded). The node timeout is 1 s, so a killed primary is replaced within a few seconds.
 *
 * <p>Every method that waits for a state is bounded and fails with what it last saw. Topology questions
 * ({@link #primaries()}, {@link #primaryForKey}) are answered from the live {@code CLUSTER NODES} of the
 * running node with the newest configuration, so they follow failovers; between a fault and
 * {@link #awaitPromotion} or {@link #awaitHealthy} they describe the cluster as it is, possibly still
 * listing a dead primary.
 *
 * <pre>{@code
 * try (RedisCluster cluster = RedisCluster.start()) {
 *     registry.add("spring.data.redis.cluster.nodes", cluster::nodesProperty);
 *     RedisNode primary = cluster.primaryForKey("{user:42}");
 *     primary.kill();
 *     RedisNode successor = cluster.awaitPromotion(primary, Duration.ofSeconds(20));
 * }
 * }</pre>
 */
public final class RedisCluster implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(RedisCluster.class);

    private static final int PRIMARIES = 3;
    private static final int NODES = 2 * PRIMARIES;

    private final RedisBinary.Choice binary;
    /** In start order: the first three were given the slots, the last three replicate them in that order. */
    private final List<RedisNode> nodes;
    private final ClusterObserver observer;

    private RedisCluster(RedisBinary.Choice binary, List<RedisNode> nodes) {
        this.binary = binary;
        this.nodes = List.copyOf(nodes);
        this.observer = new ClusterObserver(this.nodes);
    }

    /** Starts 6 nodes, joins them into 3 primaries with 1 replica each, and returns once that is settled. */
    public static RedisCluster start() {
        RedisBinary.Choice binary = RedisBinary.forProcesses();
        long startedAt = System.nanoTime();
        List<RedisNode> started = new ArrayList<>();
        try {
            for (int i = 0; i < NODES; i++) {
                started.add(ClusterFormation.startNode(binary));
            }
            RedisCluster cluster = new RedisCluster(binary, started);
            ClusterFormation.form(cluster.nodes, PRIMARIES);
            cluster.awaitHealthy(ClusterFormation.TIMEOUT);
            logger.info("Started {} in {} ms", cluster.description(), (System.nanoTime() - startedAt) / 1_000_000);
            return cluster;
        }
        catch (RuntimeException ex) {
            TopologyNodes.closeAll(started);
            throw ex;
        }
    }

    /** The hash slot of {@code key} (0..16383), honouring a {@code {hash tag}}, as Redis computes it. */
    public static int slotForKey(String key) {
        return ClusterSlots.slot(key);
    }

    /** Which binary runs the nodes, and their ports; for test logs. */
    public String description() {
        return "Redis Cluster (" + PRIMARIES + " primaries + " + PRIMARIES + " replicas) of " + binary.kind() + " "
                + binary.path() + " on " + nodesProperty();
    }

    /** {@code 127.0.0.1:port} of every node, primaries and replicas, in start order. */
    public List<String> nodes() {
        return nodes.stream().map(RedisNode::address).toList();
    }

    /** {@link #nodes()} comma-joined, the form of {@code spring.data.redis.cluster.nodes}. */
    public String nodesProperty() {
        return String.join(",", nodes());
    }

    /** Every node, whatever its role or state, in start order. */
    public List<RedisNode> allNodes() {
        return nodes;
    }

    /** The nodes the cluster currently has as primaries (masters owning slots), in slot order. */
    public List<RedisNode> primaries() {
        return observer.currentView().mastersWithSlots().stream().map(entry -> node(entry.id())).toList();
    }

    /** The nodes the cluster currently has as replicas, in the slot order of their primaries. */
    public List<RedisNode> replicas() {
        ClusterView view = observer.currentView();
        Map<String, Integer> firstSlotOfMaster = new HashMap<>();
        view.entries().forEach(entry -> firstSlotOfMaster.put(entry.id(), entry.firstSlot()));
        return view.replicas().stream()
                .sorted(Comparator.comparingInt(entry -> firstSlotOfMaster.getOrDefault(entry.masterId(),
                        Integer.MAX_VALUE)))
                .map(entry -> node(entry.id())).toList();
    }

    /** The primary currently serving {@code key}'s hash slot. */
    public RedisNode primaryForKey(String key) {
        int slot = slotForKey(key);
        ClusterView view = observer.currentView();
        return node(view.ownerOf(slot).orElseThrow(() -> new IllegalStateException(
                "no node owns slot " + slot + " of key " + key + ": " + view.summary())).id());
    }

    /** The (first) replica the cluster currently has for {@code primary}. */
    public RedisNode replicaOf(RedisNode primary) {
        ClusterView view = observer.currentView();
        return view.replicasOf(primary.id()).stream().findFirst().map(entry -> node(entry.id()))
                .orElseThrow(() -> new IllegalStateException(primary + " has no replica: " + view.summary()));
    }

    /** FLUSHALL on every running primary: empties the whole keyspace (replicas follow). */
    public void flushAll() {
        primaries().stream().filter(RedisNode::isRunning).forEach(primary -> primary.command("FLUSHALL"));
    }

    /** CONFIG RESETSTAT on every running node. */
    public void resetStats() {
        nodes.stream().filter(RedisNode::isRunning).forEach(RedisNode::resetStats);
    }

    /** Script and function executions ({@link RedisNode#scriptCalls()}) summed over the running primaries. */
    public long scriptCallsOnPrimaries() {
        return primaries().stream().filter(RedisNode::isRunning).mapToLong(RedisNode::scriptCalls).sum();
    }

    /**
     * Waits until a replica of {@code killedPrimary} (killed or paused before this call) has taken over its
     * slots and every other running node reports {@code cluster_state:ok} and agrees on the new owner; returns
     * the new primary. The killed node may be restarted afterwards and rejoins as a replica.
     *
     * @throws IllegalStateException if {@code killedPrimary} is still running, was never seen as a primary, or
     *                               the failover does not complete within {@code max}
     */
    public RedisNode awaitPromotion(RedisNode killedPrimary, Duration max) {
        if (killedPrimary.isRunning()) {
            throw new IllegalStateException(killedPrimary + " is still running: kill or pause it first");
        }
        List<int[]> slots = observer.lastKnownSlots(killedPrimary.id());
        if (slots.isEmpty()) {
            throw new IllegalStateException(killedPrimary + " was never seen owning slots");
        }
        int slot = slots.get(0)[0];
        return Await.until(max, "a replica of " + killedPrimary + " serves slot " + slot
                + " and the surviving nodes report cluster_state:ok", () -> {
                    String successor = null;
                    for (RedisNode survivor : nodes) {
                        if (survivor == killedPrimary || !survivor.isRunning()) {
                            continue;
                        }
                        String state = ClusterObserver.clusterInfo(survivor).get("cluster_state");
                        Await.check("ok".equals(state), survivor.port() + " has cluster_state:" + state);
                        ClusterView view = observer.observe(survivor);
                        String owner = view.ownerOf(slot).filter(entry -> !entry.isUnhealthy())
                                .map(ClusterView.Entry::id).orElse(null);
                        Await.check(owner != null && !owner.equals(killedPrimary.id()),
                                survivor.port() + " sees slot " + slot + " on " + owner + ": " + view.summary());
                        Await.check(successor == null || successor.equals(owner),
                                "nodes disagree on the owner of slot " + slot + ": " + successor + " / " + owner);
                        successor = owner;
                    }
                    Await.check(successor != null, "no running node to ask");
                    RedisNode promoted = node(successor);
                    Await.check("master".equals(promoted.role()), promoted + " does not report ROLE master yet");
                    return promoted;
                });
    }

    /**
     * Waits until all 6 nodes run and agree: {@code cluster_state:ok}, all 16384 slots on 3 primaries, each
     * with exactly one replica whose link to it is up, and no node flagged failing.
     *
     * @throws IllegalStateException at once if a node is not running (restart it first), or after {@code max}
     */
    public void awaitHealthy(Duration max) {
        List<RedisNode> down = nodes.stream().filter(node -> !node.isRunning()).toList();
        if (!down.isEmpty()) {
            throw new IllegalStateException("cannot become healthy while " + down + " are not running");
        }
        Await.until(max, "the cluster has " + PRIMARIES + " healthy primaries with 1 replica each", () -> {
            String agreed = null;
            for (RedisNode node : nodes) {
                Map<String, String> info = ClusterObserver.clusterInfo(node);
                Await.check("ok".equals(info.get("cluster_state")), node.port() + " has " + info);
                ClusterView view = observer.observe(node);
                String topology = ClusterObserver.healthyTopology(view, NODES, PRIMARIES);
                Await.check(agreed == null || agreed.equals(topology),
                        "nodes disagree: " + agreed + " / " + topology);
                agreed = topology;
                if (view.myself().map(ClusterView.Entry::isReplica).orElse(false)) {
                    String link = node.info("replication").get("master_link_status");
                    Await.check("up".equals(link), "replica " + node.port() + " has master_link_status:" + link);
                }
            }
            return Boolean.TRUE;
        });
    }

    /** Kills every node and deletes their directories. */
    @Override
    public void close() {
        TopologyNodes.closeAll(nodes);
    }

    @Override
    public String toString() {
        return description();
    }

    private RedisNode node(String id) {
        return nodes.stream().filter(node -> Objects.equals(node.id(), id)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no node of this cluster has ID " + id));
    }
}

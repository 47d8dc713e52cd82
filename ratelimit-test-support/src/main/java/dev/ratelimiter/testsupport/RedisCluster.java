package dev.ratelimiter.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

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
    private static final Duration FORM_TIMEOUT = Duration.ofSeconds(30);
    private static final int ADDSLOTS_BATCH = 1_000;
    private static final int START_ATTEMPTS = 3;

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

    private final RedisBinary.Choice binary;
    /** In start order: the first three were given the slots, the last three replicate them in that order. */
    private final List<RedisNode> nodes;
    /**
     * The slots each node owned when last seen as a primary: once a primary is dead and failed over, no view
     * lists its slots any more, yet {@link #awaitPromotion} must know which slots to find a new owner for.
     */
    private final Map<String, List<int[]>> lastKnownSlots = new ConcurrentHashMap<>();

    private RedisCluster(RedisBinary.Choice binary, List<RedisNode> nodes) {
        this.binary = binary;
        this.nodes = List.copyOf(nodes);
    }

    /** Starts 6 nodes, joins them into 3 primaries with 1 replica each, and returns once that is settled. */
    public static RedisCluster start() {
        RedisBinary.Choice binary = RedisBinary.forProcesses();
        long startedAt = System.nanoTime();
        List<RedisNode> started = new ArrayList<>();
        try {
            for (int i = 0; i < NODES; i++) {
                started.add(startNode(binary));
            }
            RedisCluster cluster = new RedisCluster(binary, started);
            cluster.form();
            logger.info("Started {} in {} ms", cluster.description(), (System.nanoTime() - startedAt) / 1_000_000);
            return cluster;
        }
        catch (RuntimeException ex) {
            started.forEach(RedisCluster::closeQuietly);
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
        return currentView().mastersWithSlots().stream().map(entry -> node(entry.id())).toList();
    }

    /** The nodes the cluster currently has as replicas, in the slot order of their primaries. */
    public List<RedisNode> replicas() {
        ClusterView view = currentView();
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
        ClusterView view = currentView();
        return node(view.ownerOf(slot).orElseThrow(() -> new IllegalStateException(
                "no node owns slot " + slot + " of key " + key + ": " + view.summary())).id());
    }

    /** The (first) replica the cluster currently has for {@code primary}. */
    public RedisNode replicaOf(RedisNode primary) {
        ClusterView view = currentView();
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
        List<int[]> slots = lastKnownSlots.get(killedPrimary.id());
        if (slots == null || slots.isEmpty()) {
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
                        String state = clusterInfo(survivor).get("cluster_state");
                        Await.check("ok".equals(state), survivor.port() + " has cluster_state:" + state);
                        ClusterView view = observe(survivor);
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
                Map<String, String> info = clusterInfo(node);
                Await.check("ok".equals(info.get("cluster_state")), node.port() + " has " + info);
                ClusterView view = observe(node);
                String topology = healthyTopology(view);
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
        nodes.forEach(RedisCluster::closeQuietly);
    }

    @Override
    public String toString() {
        return description();
    }

    private void form() {
        for (int i = 0; i < NODES; i++) {
            // Distinct epochs from the start, as redis-cli does, so no epoch collision has to be resolved first.
            nodes.get(i).command("CLUSTER", "SET-CONFIG-EPOCH", String.valueOf(i + 1));
        }
        for (int i = 0; i < PRIMARIES; i++) {
            addSlots(nodes.get(i), i * ClusterSlots.COUNT / PRIMARIES, (i + 1) * ClusterSlots.COUNT / PRIMARIES - 1);
        }
        RedisNode introducer = nodes.get(0);
        for (RedisNode other : nodes.subList(1, NODES)) {
            introducer.command("CLUSTER", "MEET", other.host(), String.valueOf(other.port()));
        }
        Await.until(FORM_TIMEOUT, "every node knows all " + NODES + " nodes and all slots are assigned", () -> {
            for (RedisNode node : nodes) {
                ClusterView view = ClusterView.parse(node.command("CLUSTER", "NODES"));
                Await.check(view.entries().size() == NODES && view.entries().stream().noneMatch(ClusterView.Entry::isUnhealthy)
                        && view.assignedSlots() == ClusterSlots.COUNT, node.port() + " sees " + view.summary());
                String state = clusterInfo(node).get("cluster_state");
                Await.check("ok".equals(state), node.port() + " has cluster_state:" + state);
            }
            return Boolean.TRUE;
        });
        for (int i = 0; i < PRIMARIES; i++) {
            RedisNode primary = nodes.get(i);
            RedisNode replica = nodes.get(PRIMARIES + i);
            // Retried: right after the join a node may not yet have the primary in its table as a master.
            Await.until(FORM_TIMEOUT, replica.port() + " accepts CLUSTER REPLICATE " + primary.id(),
                    () -> "OK".equals(replica.command("CLUSTER", "REPLICATE", primary.id())) ? Boolean.TRUE : null);
        }
        awaitHealthy(FORM_TIMEOUT);
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

    /** A text every node's view must produce identically when the cluster is healthy, or NotYet. */
    private static String healthyTopology(ClusterView view) {
        Await.check(view.entries().size() == NODES, "a view with " + view.entries().size() + " nodes: " + view.summary());
        Await.check(view.entries().stream().noneMatch(ClusterView.Entry::isUnhealthy), "failing nodes: " + view.summary());
        List<ClusterView.Entry> masters = view.mastersWithSlots();
        Await.check(masters.size() == PRIMARIES && view.assignedSlots() == ClusterSlots.COUNT,
                "not " + PRIMARIES + " masters covering all slots: " + view.summary());
        StringBuilder topology = new StringBuilder();
        for (ClusterView.Entry master : masters) {
            List<ClusterView.Entry> replicas = view.replicasOf(master.id());
            Await.check(replicas.size() == 1, master.port() + " has " + replicas.size() + " replicas: " + view.summary());
            topology.append(master.id()).append('@').append(master.firstSlot()).append('<')
                    .append(replicas.get(0).id()).append(' ');
        }
        return topology.toString();
    }

    private static RedisNode startNode(RedisBinary.Choice binary) {
        RuntimeException failure = null;
        for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
            try {
                // A probed port pair can be taken by someone else before the node binds it: try another pair.
                ProcessRedisServer process = new ProcessRedisServer(binary.path(), binary.kind() + " cluster node",
                        LoopbackPorts.freeWithClusterBus(), ProcessRedisServer.CommandLine.withOptions(CLUSTER_OPTIONS));
                return new RedisNode(process, true);
            }
            catch (RuntimeException ex) {
                failure = ex;
            }
        }
        throw failure;
    }

    /**
     * The view of the running node with the highest current epoch: a node just restarted still believes its
     * old configuration until it hears from the others, whereas every failover raises the epoch.
     */
    private ClusterView currentView() {
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

    private ClusterView observe(RedisNode node) {
        ClusterView view = ClusterView.parse(node.command("CLUSTER", "NODES"));
        view.mastersWithSlots().forEach(master -> lastKnownSlots.put(master.id(), master.slotRanges()));
        return view;
    }

    private static Map<String, String> clusterInfo(RedisNode node) {
        return RedisReplies.infoFields(node.command("CLUSTER", "INFO"));
    }

    private RedisNode node(String id) {
        return nodes.stream().filter(node -> Objects.equals(node.id(), id)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no node of this cluster has ID " + id));
    }

    private static void closeQuietly(RedisNode node) {
        try {
            node.close();
        }
        catch (RuntimeException ex) {
            logger.warn("Could not stop {}", node, ex);
        }
    }
}

package dev.ratelimiter.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Redis Sentinel setup: 1 primary, 2 replicas and 3 sentinels (quorum 2), each a {@code redis-server}
 * child process on 127.0.0.1, for tests of a client that finds its primary through sentinels and must follow
 * a failover.
 *
 * <p>The sentinels are the same binary run as {@code redis-server <own sentinel.conf> --sentinel}, so the
 * embedded-redis fallback works too; the binary is chosen as for {@link RedisCluster}. A primary is considered
 * down after 1 s and a failover times out after 3 s, so a killed primary is replaced within a few seconds.
 * Every wait is bounded and fails with what it last saw.
 *
 * <pre>{@code
 * try (RedisSentinel sentinel = RedisSentinel.start()) {
 *     registry.add("spring.data.redis.sentinel.master", sentinel::masterName);
 *     registry.add("spring.data.redis.sentinel.nodes", sentinel::sentinelsProperty);
 *     RedisNode primary = sentinel.primary();
 *     primary.kill();
 *     RedisNode successor = sentinel.awaitFailover(primary, Duration.ofSeconds(30));
 * }
 * }</pre>
 */
public final class RedisSentinel implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(RedisSentinel.class);

    private static final String MASTER_NAME = "ratelimit";
    private static final int REPLICAS = 2;
    private static final int SENTINELS = 3;
    private static final int QUORUM = 2;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private final RedisBinary.Choice binary;
    /** The data nodes in start order: the first one started as primary. */
    private final List<RedisNode> dataNodes;
    private final List<RedisNode> sentinels;

    private RedisSentinel(RedisBinary.Choice binary, List<RedisNode> dataNodes, List<RedisNode> sentinels) {
        this.binary = binary;
        this.dataNodes = List.copyOf(dataNodes);
        this.sentinels = List.copyOf(sentinels);
    }

    /** Starts the primary, its replicas and the sentinels, and returns once every sentinel sees them all. */
    public static RedisSentinel start() {
        RedisBinary.Choice binary = RedisBinary.forProcesses();
        long startedAt = System.nanoTime();
        List<RedisNode> started = new ArrayList<>();
        try {
            RedisNode primary = SentinelNodes.primary(binary);
            started.add(primary);
            List<RedisNode> dataNodes = new ArrayList<>(List.of(primary));
            for (int i = 0; i < REPLICAS; i++) {
                RedisNode replica = SentinelNodes.replicaOf(binary, primary);
                started.add(replica);
                dataNodes.add(replica);
            }
            // Replicas first, so each sentinel's first INFO of the primary already lists both of them.
            awaitReplicationUp(primary, dataNodes.subList(1, dataNodes.size()));
            List<RedisNode> sentinels = new ArrayList<>();
            for (int i = 0; i < SENTINELS; i++) {
                RedisNode sentinel = SentinelNodes.sentinel(binary, MASTER_NAME, primary.port(), QUORUM);
                started.add(sentinel);
                sentinels.add(sentinel);
            }
            RedisSentinel topology = new RedisSentinel(binary, dataNodes, sentinels);
            topology.awaitHealthy(START_TIMEOUT);
            logger.info("Started {} in {} ms", topology.description(), (System.nanoTime() - startedAt) / 1_000_000);
            return topology;
        }
        catch (RuntimeException ex) {
            TopologyNodes.closeAll(started);
            throw ex;
        }
    }

    /** Which binary runs the nodes, and their ports; for test logs. */
    public String description() {
        return "Redis Sentinel (1 primary + " + REPLICAS + " replicas, " + SENTINELS + " sentinels) of "
                + binary.kind() + " " + binary.path() + ": data nodes "
                + String.join(",", dataNodes.stream().map(RedisNode::address).toList())
                + ", sentinels " + sentinelsProperty();
    }

    /** The name the sentinels monitor the primary under ({@code spring.data.redis.sentinel.master}). */
    public String masterName() {
        return MASTER_NAME;
    }

    /** {@code 127.0.0.1:port} of every sentinel. */
    public List<String> sentinels() {
        return sentinels.stream().map(RedisNode::address).toList();
    }

    /** {@link #sentinels()} comma-joined, the form of {@code spring.data.redis.sentinel.nodes}. */
    public String sentinelsProperty() {
        return String.join(",", sentinels());
    }

    /** The sentinel processes, to kill or pause one. */
    public List<RedisNode> sentinelNodes() {
        return sentinels;
    }

    /** The primary and replicas, whatever their current role, in start order (the first started as primary). */
    public List<RedisNode> dataNodes() {
        return dataNodes;
    }

    /** The current primary, as the first running sentinel reports it ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}). */
    public RedisNode primary() {
        RedisNode asked = sentinels.stream().filter(RedisNode::isRunning).findFirst()
                .orElseThrow(() -> new IllegalStateException("no sentinel is running"));
        return dataNode(primaryPort(asked));
    }

    /** Every data node but the current {@link #primary()}, in start order, including any that are down. */
    public List<RedisNode> replicas() {
        RedisNode primary = primary();
        return dataNodes.stream().filter(node -> node != primary).toList();
    }

    /** FLUSHALL on the current primary (the replicas follow). */
    public void flushAll() {
        primary().command("FLUSHALL");
    }

    /**
     * Waits until every running sentinel reports the same primary, other than {@code oldPrimary}, and that node
     * answers {@code ROLE} as master; returns it. The other replica may still be resynchronising to it.
     */
    public RedisNode awaitFailover(RedisNode oldPrimary, Duration max) {
        return Await.until(max, "the sentinels report a primary other than " + oldPrimary.address(), () -> {
            Integer agreed = null;
            for (RedisNode sentinel : sentinels) {
                if (!sentinel.isRunning()) {
                    continue;
                }
                int port = primaryPort(sentinel);
                Await.check(port != oldPrimary.port(), "sentinel " + sentinel.port() + " still reports " + port);
                Await.check(agreed == null || agreed == port, "sentinels disagree: " + agreed + " / " + port);
                agreed = port;
            }
            Await.check(agreed != null, "no sentinel is running");
            RedisNode promoted = dataNode(agreed);
            Await.check(promoted.isRunning() && "master".equals(promoted.role()),
                    promoted.address() + " does not report ROLE master yet");
            return promoted;
        });
    }

    /**
     * Waits until every sentinel reports the same primary with {@value #REPLICAS} replicas, all linked and none
     * down, and {@value #SENTINELS}-1 other sentinels. A primary restarted after a failover comes back as a
     * primary and is turned into a replica by the sentinels only after the failover timeout and their next
     * INFO of it, which they send to replicas every 10 s: allow about 25 s for that.
     *
     * @throws IllegalStateException at once if a node is not running (restart it first), or after {@code max}
     */
    public void awaitHealthy(Duration max) {
        List<RedisNode> down = new ArrayList<>(dataNodes);
        down.addAll(sentinels);
        down.removeIf(RedisNode::isRunning);
        if (!down.isEmpty()) {
            throw new IllegalStateException("cannot become healthy while " + down + " are not running");
        }
        Await.until(max, "every sentinel sees a primary with " + REPLICAS + " replicas and "
                + (SENTINELS - 1) + " other sentinels", () -> {
                    String agreed = null;
                    for (RedisNode sentinel : sentinels) {
                        Map<String, String> master = RedisReplies.pairs(sentinel.reply("SENTINEL", "MASTER", MASTER_NAME));
                        Await.check("master".equals(master.get("flags"))
                                && String.valueOf(REPLICAS).equals(master.get("num-slaves"))
                                && String.valueOf(SENTINELS - 1).equals(master.get("num-other-sentinels")),
                                "sentinel " + sentinel.port() + " reports " + master);
                        String port = master.get("port");
                        Await.check(agreed == null || agreed.equals(port), "sentinels disagree: " + agreed + " / " + port);
                        agreed = port;
                        for (Object replica : (List<?>) sentinel.reply("SENTINEL", "REPLICAS", MASTER_NAME)) {
                            Map<String, String> fields = RedisReplies.pairs(replica);
                            Await.check("slave".equals(fields.get("flags")) && "ok".equals(fields.get("master-link-status"))
                                    && port.equals(fields.get("master-port")),
                                    "sentinel " + sentinel.port() + " reports replica " + fields);
                        }
                    }
                    Await.check(agreed != null && "master".equals(dataNode(Integer.parseInt(agreed)).role()),
                            "the reported primary " + agreed + " does not answer ROLE master");
                    return Boolean.TRUE;
                });
    }

    /** Kills every process and deletes their directories. */
    @Override
    public void close() {
        TopologyNodes.closeAll(sentinels);
        TopologyNodes.closeAll(dataNodes);
    }

    @Override
    public String toString() {
        return description();
    }

    private static void awaitReplicationUp(RedisNode primary, List<RedisNode> replicas) {
        Await.until(START_TIMEOUT, "both replicas have synced with " + primary.address(), () -> {
            for (RedisNode replica : replicas) {
                String link = replica.info("replication").get("master_link_status");
                Await.check("up".equals(link), replica.address() + " has master_link_status:" + link);
            }
            String connected = primary.info("replication").get("connected_slaves");
            Await.check(String.valueOf(replicas.size()).equals(connected), "connected_slaves:" + connected);
            return Boolean.TRUE;
        });
    }

    private static int primaryPort(RedisNode sentinel) {
        Object reply = sentinel.reply("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
        if (reply instanceof List<?> address && address.size() == 2) {
            return Integer.parseInt(String.valueOf(address.get(1)));
        }
        throw new IllegalStateException("sentinel " + sentinel.port() + " does not know " + MASTER_NAME + ": " + reply);
    }

    private RedisNode dataNode(int port) {
        return dataNodes.stream().filter(node -> node.port() == port).findFirst()
                .orElseThrow(() -> new IllegalStateException("no data node on port " + port));
    }
}

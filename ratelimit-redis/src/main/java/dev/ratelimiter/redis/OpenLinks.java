package dev.ratelimiter.redis;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

/**
 * Whether the link that would carry a call is up right now. Lettuce holds a call made while its connection is down
 * until it has reconnected, and sends it then; a decision has milliseconds, so the limiter asks first, and a call
 * that could not leave is decided without Redis at once (and never reaches Redis later, long after its request).
 *
 * <p>Standalone and Sentinel: the one connection. Cluster: Lettuce's connection to the primary serving the first key's
 * slot. A node whose connection Lettuce has not opened yet counts as up: the call opens it, and waits for it within
 * the decision's longest wait ({@code ratelimit.store.max-wait}).
 */
final class OpenLinks {

    private static final long RETRY_AFTER_NANOS = 1_000_000_000L;

    private final Map<String, StatefulRedisConnection<String, String>> nodes = new ConcurrentHashMap<>();
    /** Nodes Lettuce failed to open a connection to, with when that was seen. */
    private final Map<String, Long> failures = new ConcurrentHashMap<>();

    /** Whether a call to {@code keys} (all in one slot) would be written now. On the dispatch thread. */
    boolean carries(StatefulConnection<String, String> connection, String[] keys) {
        if (!(connection instanceof StatefulRedisClusterConnection<String, String> cluster)) {
            return connection.isOpen();
        }
        if (keys.length == 0) {
            return true;
        }
        RedisClusterNode node = cluster.getPartitions().getPartitionBySlot(SlotHash.getSlot(keys[0]));
        if (node == null || node.getNodeId() == null) {
            return true;
        }
        StatefulRedisConnection<String, String> link = nodes.get(node.getNodeId());
        if (link != null && link.isOpen()) {
            return true;
        }
        // Not known yet, or down: ask Lettuce for its connection to that node (after a topology change it may be a
        // new one), without waiting for one to open.
        Long failedAt = failures.get(node.getNodeId());
        if (failedAt != null && System.nanoTime() - failedAt < RETRY_AFTER_NANOS) {
            return false; // Lettuce could not open one a moment ago: not asked again until a second has passed
        }
        CompletableFuture<StatefulRedisConnection<String, String>> opening = opening(cluster, node.getNodeId());
        if (opening == null) {
            return true; // a node Lettuce does not know (the topology changed under us): the call is routed afresh
        }
        if (opening.isCompletedExceptionally()) {
            failures.put(node.getNodeId(), System.nanoTime());
            return false; // the node is down: nothing would be written
        }
        failures.remove(node.getNodeId());
        StatefulRedisConnection<String, String> current = opening.isDone() ? opening.join() : null;
        if (current == null) {
            // still opening: a first connection is waited for (within the longest wait), a lost one is not
            return link == null;
        }
        nodes.put(node.getNodeId(), current);
        return current.isOpen();
    }

    /** Forgets every node link (the connection they belong to was closed). */
    void forget() {
        nodes.clear();
        failures.clear();
    }

    /** Lettuce's connection to the node, opened or opening; null for a node it does not know (any more). */
    private static CompletableFuture<StatefulRedisConnection<String, String>> opening(
            StatefulRedisClusterConnection<String, String> cluster, String nodeId) {
        try {
            return cluster.getConnectionAsync(nodeId);
        }
        catch (RuntimeException unknownNode) {
            return null;
        }
    }
}

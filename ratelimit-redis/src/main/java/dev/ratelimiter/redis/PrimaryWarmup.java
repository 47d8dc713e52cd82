package dev.ratelimiter.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

/**
 * Makes the cold paths warm before the first request: a connection to every primary open (Lettuce opens a cluster
 * node's connection on the first command for its slots, which takes longer than a decision may wait) and every
 * script loaded on each (else the first call of each script is {@code NOSCRIPT}, then sent again by body).
 * Start-up only, on the thread that builds the application.
 */
final class PrimaryWarmup {

    private PrimaryWarmup() {
    }

    /** How many primaries are open with every script loaded by {@code deadlineNanos} ({@link System#nanoTime}). */
    static int warm(StatefulConnection<String, String> connection, long deadlineNanos) {
        List<CompletableFuture<StatefulRedisConnection<String, String>>> opening = new ArrayList<>();
        if (connection instanceof StatefulRedisClusterConnection<String, String> cluster) {
            for (RedisClusterNode node : cluster.getPartitions()) {
                if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                    opening.add(cluster.getConnectionAsync(node.getNodeId()));
                }
            }
        }
        else {
            opening.add(CompletableFuture.completedFuture((StatefulRedisConnection<String, String>) connection));
        }
        int warm = 0;
        for (CompletableFuture<StatefulRedisConnection<String, String>> primary : opening) {
            StatefulRedisConnection<String, String> link = await(primary, deadlineNanos);
            if (link == null) {
                continue;
            }
            List<CompletableFuture<String>> loads = new ArrayList<>();
            for (LimiterScript script : LimiterScript.values()) {
                loads.add(link.async().scriptLoad(script.body()).toCompletableFuture());
            }
            boolean loaded = true;
            for (CompletableFuture<String> load : loads) {
                loaded &= await(load, deadlineNanos) != null;
            }
            warm += loaded ? 1 : 0;
        }
        return warm;
    }

    private static <T> T await(CompletableFuture<T> future, long deadlineNanos) {
        try {
            return future.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return null;
        }
        catch (Exception ex) {
            return null;
        }
    }
}

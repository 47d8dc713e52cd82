package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.testsupport.RedisCluster;
import dev.ratelimiter.testsupport.RedisNode;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.RedisClusterClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On a cluster, Lettuce writes some commands itself, outside our dispatch thread: the first command for a node whose
 * connection is still opening (written when the connect completes) and a command redirected by {@code MOVED} (written
 * again from the I/O thread that read the redirect). Were the connection's commands flushed only by our dispatch
 * thread, such a command would sit in Lettuce's buffer until the next command of ours, or its timeout: a lone command
 * must be answered without help. The command timeout is 10 s here, so a stuck command cannot pass the 3 s wait.
 */
class ClusterLoneCommandTest {

    private static RedisCluster cluster;
    private static RedisClusterClient client;

    @BeforeAll
    static void start() {
        cluster = RedisCluster.start();
        List<RedisURI> uris = new ArrayList<>();
        for (String node : cluster.nodes()) {
            String[] hostPort = node.split(":");
            uris.add(RedisURI.create(hostPort[0], Integer.parseInt(hostPort[1])));
        }
        client = RedisClusterClient.create(uris);
    }

    @AfterAll
    static void stop() {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        cluster.close();
    }

    @Test
    void aLoneCommandToEachPrimaryIsAnsweredPromptly() throws Exception {
        LimiterConnection connection = open();
        try {
            for (RedisNode primary : cluster.primaries()) {
                String key = keyServedBy(primary);
                String outcome;
                try {
                    assertThat(lone(connection, key).get(3, TimeUnit.SECONDS)).containsExactly(0L);
                    outcome = "answered";
                }
                catch (Exception ex) {
                    outcome = ex.getCause() != null ? ex.getCause().toString() : ex.toString();
                }
                assertThat(outcome).as("first lone command to primary %s", primary.address()).isEqualTo("answered");
            }
        }
        finally {
            connection.close();
        }
    }

    @Test
    void aLoneCommandRedirectedByMovedIsAnsweredPromptly() throws Exception {
        LimiterConnection connection = open();
        try {
            List<RedisNode> primaries = cluster.primaries();
            RedisNode from = primaries.get(0);
            RedisNode to = primaries.get(1);
            String key = keyServedBy(from);
            int slot = RedisCluster.slotForKey(key);
            // Warm both node connections, so only the redirect is in play.
            lone(connection, key).get(5, TimeUnit.SECONDS);
            lone(connection, keyServedBy(to)).get(5, TimeUnit.SECONDS);
            // Hand the (empty) slot to another primary behind Lettuce's back: its topology view goes stale, the old
            // owner answers MOVED.
            for (RedisNode node : primaries) {
                node.command("CLUSTER", "SETSLOT", String.valueOf(slot), "NODE", to.id());
            }
            Thread.sleep(300);
            String outcome;
            CompletableFuture<List<Long>> reply = lone(connection, key);
            try {
                assertThat(reply.get(3, TimeUnit.SECONDS)).containsExactly(0L);
                outcome = "answered";
            }
            catch (Exception ex) {
                outcome = ex.getCause() != null ? ex.getCause().toString() : ex.toString();
            }
            assertThat(outcome).as("a lone command redirected by MOVED").isEqualTo("answered");
        }
        finally {
            connection.close();
        }
    }

    private static LimiterConnection open() throws InterruptedException {
        LimiterConnection connection = new LimiterConnection(() -> client, cluster.nodesProperty(),
                Duration.ofSeconds(10), Duration.ofMillis(100));
        connection.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!connection.connected() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(connection.connected()).isTrue();
        return connection;
    }

    /** One script call of its own: gives back a permit nobody holds (answers {@code [0]}). */
    private static CompletableFuture<List<Long>> lone(LimiterConnection connection, String key) {
        return connection.script(LimiterScript.PERMITS, ScriptOutputType.MULTI, new String[] { key },
                new String[] { "release", "0", "nobody" });
    }

    private static String keyServedBy(RedisNode primary) {
        for (int i = 0; ; i++) {
            String key = "lone-" + i;
            if (cluster.primaryForKey(key).id().equals(primary.id())) {
                return key;
            }
        }
    }
}

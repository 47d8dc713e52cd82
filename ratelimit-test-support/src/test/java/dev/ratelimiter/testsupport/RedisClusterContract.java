package dev.ratelimiter.testsupport;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import static dev.ratelimiter.testsupport.TopologyTests.eventually;
import static dev.ratelimiter.testsupport.TopologyTests.millisSince;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What {@link RedisCluster} promises, run once per binary by the subclasses. One cluster per class keeps the
 * suite fast; the failover test runs last because it changes who is primary.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class RedisClusterContract {

    private RedisCluster cluster;

    /** {@code path} or {@code embedded}: the value of {@code ratelimit.test.redis} the cluster starts with. */
    abstract String kind();

    @BeforeAll
    void startCluster() {
        long started = System.nanoTime();
        cluster = TopologyTests.startWith(kind(), RedisCluster::start);
        System.out.printf("[%s] cluster formed in %d ms: %s%n", kind(), millisSince(started), cluster.description());
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void formsThreePrimariesWithOneReplicaEachCoveringAllSlots() {
        List<RedisNode> primaries = cluster.primaries();
        List<RedisNode> replicas = cluster.replicas();
        assertThat(primaries).hasSize(3);
        assertThat(replicas).hasSize(3).doesNotContainAnyElementsOf(primaries);
        assertThat(cluster.nodes()).hasSize(6).allMatch(address -> address.startsWith("127.0.0.1:"))
                .doesNotHaveDuplicates();
        assertThat(cluster.nodesProperty()).isEqualTo(String.join(",", cluster.nodes()));
        for (RedisNode node : cluster.allNodes()) {
            Map<String, String> info = RedisReplies.infoFields(node.command("CLUSTER", "INFO"));
            assertThat(info).containsEntry("cluster_state", "ok").containsEntry("cluster_slots_assigned", "16384")
                    .containsEntry("cluster_slots_ok", "16384").containsEntry("cluster_known_nodes", "6")
                    .containsEntry("cluster_size", "3");
            TopologyTests.assertRunsBinaryOf(kind(), node);
        }
        for (RedisNode primary : primaries) {
            RedisNode replica = cluster.replicaOf(primary);
            assertThat(primary.role()).isEqualTo("master");
            assertThat(replica.role()).isEqualTo("slave");
            assertThat(replica.info("replication")).containsEntry("master_port", String.valueOf(primary.port()))
                    .containsEntry("master_link_status", "up");
            assertThat(replica.id()).isEqualTo(replica.command("CLUSTER", "MYID")).hasSize(40);
        }
        ClusterView view = ClusterView.parse(replicas.get(0).command("CLUSTER", "NODES"));
        assertThat(view.mastersWithSlots()).extracting(ClusterView.Entry::slotCount).containsExactly(5461, 5461, 5462);
    }

    @Test
    @Order(2)
    void slotOfAKeyIsTheOneRedisComputes() {
        RedisNode node = cluster.allNodes().get(0);
        List<String> keys = IntStream.range(0, 300).mapToObj(i -> i % 3 == 0 ? "{tenant-" + i + "}:bucket" : "rl:key:" + i)
                .toList();
        for (String key : keys) {
            assertThat(RedisCluster.slotForKey(key)).as(key)
                    .isEqualTo(Integer.parseInt(node.command("CLUSTER", "KEYSLOT", key)));
        }
    }

    @Test
    @Order(3)
    void aKeySetOnItsPrimaryIsServedThereAndReplicated() {
        cluster.flushAll();
        List<String> keys = IntStream.range(0, 30).mapToObj(i -> "rl:tenant-" + i).toList();
        for (String key : keys) {
            assertThat(cluster.primaryForKey(key).command("SET", key, "v-" + key)).isEqualTo("OK");
        }
        List<RedisNode> primaries = cluster.primaries();
        for (String key : keys) {
            RedisNode owner = cluster.primaryForKey(key);
            assertThat(owner.command("GET", key)).isEqualTo("v-" + key);
            for (RedisNode other : primaries) {
                if (other != owner) {
                    assertThatThrownBy(() -> other.command("GET", key)).isInstanceOf(UncheckedIOException.class)
                            .rootCause().hasMessageContaining("MOVED " + RedisCluster.slotForKey(key) + " " + owner.address());
                }
            }
        }
        long total = 0;
        for (RedisNode primary : primaries) {
            long onPrimary = Long.parseLong(primary.command("DBSIZE"));
            long expected = keys.stream().filter(key -> cluster.primaryForKey(key) == primary).count();
            assertThat(onPrimary).as("keys on " + primary).isEqualTo(expected);
            RedisNode replica = cluster.replicaOf(primary);
            eventually(Duration.ofSeconds(5), "replica " + replica + " has the " + expected + " keys",
                    () -> Long.parseLong(replica.command("DBSIZE")) == expected);
            total += onPrimary;
        }
        assertThat(total).isEqualTo(keys.size());
        assertThat(primaries).allMatch(primary -> Long.parseLong(primary.command("DBSIZE")) > 0,
                "30 keys spread over all 3 primaries");

        cluster.flushAll();
        assertThat(primaries).allMatch(primary -> "0".equals(primary.command("DBSIZE")));
    }

    @Test
    @Order(4)
    void commandCallsCountTheScriptsEachPrimaryRan() {
        String key = "{bucket-7}:tokens";
        RedisNode owner = cluster.primaryForKey(key);
        String sha = owner.command("SCRIPT", "LOAD", "return redis.call('INCR', KEYS[1])");
        cluster.resetStats();
        for (int i = 0; i < 12; i++) {
            owner.command("EVALSHA", sha, "1", key);
        }
        owner.command("EVAL", "return redis.call('GET', KEYS[1])", "1", key);

        assertThat(owner.commandCalls("evalsha")).isEqualTo(12);
        assertThat(owner.commandCalls("EVAL")).isEqualTo(1);
        assertThat(owner.scriptCalls()).isEqualTo(13);
        assertThat(owner.command("GET", key)).isEqualTo("12");
        assertThat(cluster.scriptCallsOnPrimaries()).as("only the owner ran scripts").isEqualTo(13);
        assertThat(cluster.replicaOf(owner).scriptCalls()).as("scripts replicate as effects").isZero();

        owner.resetStats();
        assertThat(owner.commandCalls("evalsha")).isZero();
        cluster.flushAll();
    }

    @Test
    @Order(5)
    void killingAPrimaryPromotesItsReplicaAndTheOldPrimaryRejoinsAsReplica() {
        String key = "{tenant-failover}:bucket";
        RedisNode primary = cluster.primaryForKey(key);
        RedisNode replica = cluster.replicaOf(primary);
        String primaryId = primary.id();
        assertThat(primary.command("SET", key, "survives")).isEqualTo("OK");
        eventually(Duration.ofSeconds(5), "the replica has the key", () -> "1".equals(replica.command("DBSIZE")));

        primary.kill();
        long killed = System.nanoTime();
        RedisNode promoted = cluster.awaitPromotion(primary, Duration.ofSeconds(20));
        long failoverMillis = millisSince(killed);
        System.out.printf("[%s] cluster failover: replica %s promoted %d ms after SIGKILL of %s%n",
                kind(), promoted.address(), failoverMillis, primary.address());

        assertThat(promoted).isSameAs(replica);
        assertThat(promoted.role()).isEqualTo("master");
        assertThat(cluster.primaryForKey(key)).isSameAs(promoted);
        assertThat(promoted.command("GET", key)).isEqualTo("survives");
        assertThat(cluster.primaries()).hasSize(3).doesNotContain(primary).contains(promoted);
        assertThat(failoverMillis).isLessThan(20_000);

        primary.restart();
        long restarted = System.nanoTime();
        cluster.awaitHealthy(Duration.ofSeconds(20));
        System.out.printf("[%s] cluster healthy again %d ms after restarting %s%n", kind(), millisSince(restarted),
                primary.address());
        assertThat(primary.id()).as("nodes.conf keeps the node ID").isEqualTo(primaryId);
        assertThat(primary.role()).isEqualTo("slave");
        assertThat(cluster.replicaOf(promoted)).isSameAs(primary);
        eventually(Duration.ofSeconds(5), "the rejoined node resynced the key",
                () -> "1".equals(primary.command("DBSIZE")));
    }
}

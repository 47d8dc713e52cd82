package dev.ratelimiter.testsupport;

import java.time.Duration;
import java.util.List;
import java.util.Map;

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

/** What {@link RedisSentinel} promises, run once per binary by the subclasses; the failover test runs last. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class RedisSentinelContract {

    private RedisSentinel sentinel;

    /** {@code path} or {@code embedded}: the value of {@code ratelimit.test.redis} the topology starts with. */
    abstract String kind();

    @BeforeAll
    void startSentinel() {
        long started = System.nanoTime();
        sentinel = TopologyTests.startWith(kind(), RedisSentinel::start);
        System.out.printf("[%s] sentinel topology up in %d ms: %s%n", kind(), millisSince(started),
                sentinel.description());
    }

    @AfterAll
    void stopSentinel() {
        if (sentinel != null) {
            sentinel.close();
        }
    }

    @Test
    @Order(1)
    void everySentinelSeesThePrimaryItsTwoReplicasAndTheOtherSentinels() {
        RedisNode primary = sentinel.primary();
        assertThat(primary).isSameAs(sentinel.dataNodes().get(0));
        assertThat(primary.role()).isEqualTo("master");
        assertThat(sentinel.sentinels()).hasSize(3).allMatch(address -> address.startsWith("127.0.0.1:"))
                .doesNotHaveDuplicates();
        assertThat(sentinel.sentinelsProperty()).isEqualTo(String.join(",", sentinel.sentinels()));
        for (RedisNode each : sentinel.sentinelNodes()) {
            assertThat(each.role()).isEqualTo("sentinel");
            Map<String, String> master = RedisReplies.pairs(each.reply("SENTINEL", "MASTER", sentinel.masterName()));
            assertThat(master).containsEntry("port", String.valueOf(primary.port())).containsEntry("flags", "master")
                    .containsEntry("num-slaves", "2").containsEntry("num-other-sentinels", "2")
                    .containsEntry("quorum", "2");
            TopologyTests.assertRunsBinaryOf(kind(), each);
        }
        List<RedisNode> replicas = sentinel.replicas();
        assertThat(replicas).hasSize(2).doesNotContain(primary);
        for (RedisNode replica : replicas) {
            assertThat(replica.role()).isEqualTo("slave");
            assertThat(replica.info("replication")).containsEntry("master_port", String.valueOf(primary.port()))
                    .containsEntry("master_link_status", "up");
            TopologyTests.assertRunsBinaryOf(kind(), replica);
        }

        assertThat(primary.command("SET", "rl:replicated", "yes")).isEqualTo("OK");
        for (RedisNode replica : replicas) {
            eventually(Duration.ofSeconds(5), replica + " has the key",
                    () -> "yes".equals(replica.command("GET", "rl:replicated")));
        }
        sentinel.flushAll();
        assertThat(primary.command("DBSIZE")).isEqualTo("0");
    }

    @Test
    @Order(2)
    void killingThePrimaryFailsOverToAReplica() {
        RedisNode oldPrimary = sentinel.primary();
        List<RedisNode> replicas = sentinel.replicas();
        assertThat(oldPrimary.command("SET", "rl:failover", "survives")).isEqualTo("OK");
        for (RedisNode replica : replicas) {
            eventually(Duration.ofSeconds(5), replica + " has the key",
                    () -> "survives".equals(replica.command("GET", "rl:failover")));
        }

        oldPrimary.kill();
        long killed = System.nanoTime();
        RedisNode promoted = sentinel.awaitFailover(oldPrimary, Duration.ofSeconds(30));
        long failoverMillis = millisSince(killed);
        System.out.printf("[%s] sentinel failover: %s promoted %d ms after SIGKILL of %s%n", kind(),
                promoted.address(), failoverMillis, oldPrimary.address());

        assertThat(replicas).contains(promoted);
        assertThat(promoted.role()).isEqualTo("master");
        assertThat(sentinel.primary()).isSameAs(promoted);
        assertThat(promoted.command("GET", "rl:failover")).isEqualTo("survives");
        assertThat(promoted.command("SET", "rl:after", "writable")).isEqualTo("OK");
        for (RedisNode each : sentinel.sentinelNodes()) {
            assertThat(each.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", sentinel.masterName()))
                    .isEqualTo("127.0.0.1\n" + promoted.port() + "\n");
        }
        assertThat(failoverMillis).isLessThan(30_000);
    }
}

package dev.ratelimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.BucketReading;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.UsageProbe;
import dev.ratelimiter.testsupport.RedisCluster;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On a real Redis Cluster, one usage read of buckets in several slots (a client's per-key rules and its per-user rule
 * land in different ones) is split by hash tag into one peek per slot, each answered, and the readings come back in
 * the order asked.
 */
class ClusterPeekTest {

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
    void aReadAcrossSlotsIsOnePeekPerSlotInTheOrderAsked() throws Exception {
        LimiterConnection connection = new LimiterConnection(() -> client, cluster.nodesProperty(),
                Duration.ofSeconds(10), Duration.ofMillis(100));
        connection.start();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (!connection.connected() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(connection.connected()).isTrue();
            RedisKeys keys = new RedisKeys("rl");
            RedisRateLimitStore store = new RedisRateLimitStore(connection, keys, true, Duration.ofSeconds(5));
            ClientIds ids = ClientIds.unkeyed();
            List<UsageProbe> probes = new ArrayList<>();
            for (int client = 0; client < 6; client++) {
                Rule rule = new Rule("r" + client, "r" + client, Match.ANY, List.of(Dimension.API_KEY),
                        new TokenBucketLimit(10, 10, Duration.ofHours(1)), 1, Mode.ENFORCE, FailureMode.OPEN);
                BucketKey bucket = new BucketKey(ids.of("client-" + client), rule.id() + "@t");
                for (int spent = 0; spent < client; spent++) {
                    store.evaluate(List.of(new Check(rule, bucket, 1, false))).block(Duration.ofSeconds(10));
                }
                probes.add(new UsageProbe(rule, bucket));
            }
            assertThat(probes.stream().map(probe -> RedisCluster.slotForKey(keys.bucket(probe.bucket()))).distinct()
                    .count()).as("the buckets are spread over several slots").isGreaterThan(1);

            List<BucketReading> readings = new RedisUsageReader(connection, keys, true, Duration.ofSeconds(5))
                    .read(probes).block(Duration.ofSeconds(10));

            for (int client = 0; client < 6; client++) {
                assertThat(readings.get(client).remaining()).as("client " + client).isEqualTo(10 - client);
                assertThat(readings.get(client).stored()).isEqualTo(client > 0);
            }
        }
        finally {
            connection.close();
        }
    }
}

package dev.ratelimiter.gateway;

import java.time.Duration;

import dev.ratelimiter.testsupport.ClosedAfterTheClass;
import dev.ratelimiter.testsupport.RedisCluster;
import dev.ratelimiter.testsupport.RedisNode;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Redis Cluster: the primary of the noisy client's slot killed; its replica promoted by the cluster. */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RedisClusterFailoverTest extends FailoverContract {

    static final RedisCluster cluster = RedisCluster.start();

    static final StubUpstream upstream = StubUpstream.start();

    @RegisterExtension
    static final ClosedAfterTheClass servers = ClosedAfterTheClass.of(cluster, upstream);

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.cluster.nodes", cluster::nodesProperty);
        properties(registry, upstream);
    }

    @Override
    StubUpstream upstream() {
        return upstream;
    }

    @Override
    Object killPrimaryOf(String key) {
        RedisNode primary = cluster.primaryForKey(key);
        primary.kill();
        return primary;
    }

    @Override
    void awaitPromotion(Object killed) {
        cluster.awaitPromotion((RedisNode) killed, Duration.ofSeconds(20));
    }
}

package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.testsupport.ClosedAfterTheClass;
import dev.ratelimiter.testsupport.LimiterProbe;
import dev.ratelimiter.testsupport.RedisCluster;
import dev.ratelimiter.testsupport.RedisNode;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.SaturatedGatewayContract;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link SaturatedGatewayContract} on the WebFlux gateway over a Redis Cluster of three primaries: the loop's keys
 * spread over all three, each decision a call to its key's primary. The pause freezes the primary holding the hot
 * key's bucket for less than the cluster's node timeout (1 s): longer, its replica takes over, which is
 * {@code RedisClusterFailoverTest}'s business.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SaturatedClusterAccuracyTest extends SaturatedGatewayContract {

    static final RedisCluster cluster = RedisCluster.start();
    static final StubUpstream upstream = StubUpstream.start();

    @RegisterExtension
    static final ClosedAfterTheClass servers = ClosedAfterTheClass.of(cluster, upstream);

    @LocalServerPort
    int port;

    @Autowired
    ApplicationContext context;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.cluster.nodes", cluster::nodesProperty);
        TestRoutes.route(registry, 0, "api", "/api/**", upstream::uri);
        limits().forEach((name, value) -> registry.add(name, () -> value));
    }

    @BeforeEach
    void clean() {
        cluster.flushAll();
        upstream.reset();
    }

    @Override
    protected int port() {
        return port;
    }

    @Override
    protected LimiterProbe limiter() {
        return StoreStackProbe.of(context);
    }

    @Override
    protected StubUpstream upstream() {
        return upstream;
    }

    @Override
    protected List<RedisNode> redisServers() {
        return cluster.allNodes();
    }

    @Override
    protected RedisServer hotKeyServer() {
        return cluster.primaryForKey("rl:{" + ClientIds.unkeyed().of(HOT_KEY) + "}:hot-key@t");
    }

    @Override
    protected Duration pauseLength() {
        return Duration.ofMillis(700);
    }
}

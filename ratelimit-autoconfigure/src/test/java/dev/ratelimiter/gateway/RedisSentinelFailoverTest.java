package dev.ratelimiter.gateway;

import java.time.Duration;

import dev.ratelimiter.testsupport.ClosedAfterTheClass;
import dev.ratelimiter.testsupport.RedisNode;
import dev.ratelimiter.testsupport.RedisSentinel;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Redis Sentinel: the primary killed; three sentinels fail over to a replica. */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RedisSentinelFailoverTest extends FailoverContract {

    static final RedisSentinel sentinel = RedisSentinel.start();

    static final StubUpstream upstream = StubUpstream.start();

    @RegisterExtension
    static final ClosedAfterTheClass servers = ClosedAfterTheClass.of(sentinel, upstream);

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.sentinel.master", sentinel::masterName);
        registry.add("spring.data.redis.sentinel.nodes", sentinel::sentinelsProperty);
        properties(registry, upstream);
    }

    @Override
    StubUpstream upstream() {
        return upstream;
    }

    @Override
    Object killPrimaryOf(String key) {
        RedisNode primary = sentinel.primary();
        primary.kill();
        return primary;
    }

    @Override
    void awaitPromotion(Object killed) {
        sentinel.awaitFailover((RedisNode) killed, Duration.ofSeconds(30));
    }
}

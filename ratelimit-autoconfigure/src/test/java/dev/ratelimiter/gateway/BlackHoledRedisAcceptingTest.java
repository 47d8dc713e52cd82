package dev.ratelimiter.gateway;

import dev.ratelimiter.testsupport.BlackHole;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Redis accepts the connection and never answers the handshake. */
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class BlackHoledRedisAcceptingTest extends BlackHoledRedisContract {

    static final BlackHole hole = BlackHole.acceptingSilently();

    static final StubUpstream upstream = StubUpstream.start();

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        properties(registry, hole, upstream);
    }

    @Override
    StubUpstream upstream() {
        return upstream;
    }

    @AfterAll
    static void close() {
        hole.close();
        upstream.close();
    }
}

package dev.ratelimiter.gateway;

import java.util.List;

import dev.ratelimiter.testsupport.LimiterProbe;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.SaturatedGatewayContract;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link SaturatedGatewayContract} on the WebFlux gateway over one standalone Redis. */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SaturatedGatewayAccuracyTest extends SaturatedGatewayContract {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEach();

    @LocalServerPort
    int port;

    @Autowired
    ApplicationContext context;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        fixture.route(registry, 0, "api", "/api/**");
        limits().forEach((name, value) -> registry.add(name, () -> value));
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
        return fixture.upstream();
    }

    @Override
    protected List<RedisServer> redisServers() {
        return List.of(fixture.redis().server());
    }

    @Override
    protected RedisServer hotKeyServer() {
        return fixture.redis().server();
    }
}

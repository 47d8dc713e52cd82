package dev.ratelimiter.mvc;

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

/**
 * {@link SaturatedGatewayContract} on the Gateway Server MVC flavour over one standalone Redis: each decision waited
 * for on its servlet thread; the loop's connections kept alive (Tomcat would close each after 100 requests).
 */
@DirtiesContext
@SpringBootTest(classes = TestMvcGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcSaturatedGatewayAccuracyTest extends SaturatedGatewayContract {

    @RegisterExtension
    static final MvcGatewayFixture fixture = new MvcGatewayFixture();

    @LocalServerPort
    int port;

    @Autowired
    ApplicationContext context;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("server.address", () -> "127.0.0.1");
        registry.add("server.tomcat.max-keep-alive-requests", () -> "-1");
        limits().forEach((name, value) -> registry.add(name, () -> value));
    }

    @Override
    protected int port() {
        return port;
    }

    @Override
    protected LimiterProbe limiter() {
        return MvcStoreStackProbe.of(context);
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

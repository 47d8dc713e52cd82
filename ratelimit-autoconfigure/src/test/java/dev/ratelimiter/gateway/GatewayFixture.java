package dev.ratelimiter.gateway;

import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The set-up the gateway integration tests share: a real redis-server of the test class's own, a counting stub
 * upstream, both stopped after the last test, and before each test an empty Redis and a stub that has counted
 * nothing — so that no test sees another's buckets or hits. Register it on a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final GatewayFixture fixture = GatewayFixture.cleanBeforeEach();
 * }</pre>
 *
 * Tests of one shared context whose state builds up from test to test (runtime rules written once, a meter that
 * counts across tests) take {@link #keptAcrossTests()} instead.
 *
 * A class that never kills, pauses or restarts its Redis, and whose gateways are all closed when it ends
 * ({@code @DirtiesContext}, or closed in {@code @AfterAll}), takes the {@code onSharedRedis} variants: the test JVM's
 * one Redis ({@link RedisServerExtension#shared()}), emptied before the class, instead of a server started and stopped
 * for it.
 *
 * A test that kills or pauses Redis leaves it to its own {@code @BeforeEach} to bring it back: the clean-up here runs
 * first and skips a server that is not running.
 */
public final class GatewayFixture implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

    private final RedisServerExtension redis;
    private final StubUpstream upstream = StubUpstream.start();
    private final boolean cleanBeforeEach;

    private GatewayFixture(boolean cleanBeforeEach, boolean sharedRedis) {
        this.cleanBeforeEach = cleanBeforeEach;
        this.redis = sharedRedis ? RedisServerExtension.shared() : new RedisServerExtension();
    }

    /** Before each test: {@code FLUSHALL} (if the server runs) and the stub's counts reset. */
    public static GatewayFixture cleanBeforeEach() {
        return new GatewayFixture(true, false);
    }

    /** Redis and the stub's counts carry over from one test to the next. */
    public static GatewayFixture keptAcrossTests() {
        return new GatewayFixture(false, false);
    }

    /** As {@link #cleanBeforeEach()}, on the test JVM's shared Redis (see above for which classes may). */
    public static GatewayFixture cleanBeforeEachOnSharedRedis() {
        return new GatewayFixture(true, true);
    }

    /** As {@link #keptAcrossTests()}, on the test JVM's shared Redis, emptied before the class. */
    public static GatewayFixture keptAcrossTestsOnSharedRedis() {
        return new GatewayFixture(false, true);
    }

    public RedisServerExtension redis() {
        return redis;
    }

    public StubUpstream upstream() {
        return upstream;
    }

    /** Points a {@code @SpringBootTest} gateway at this fixture's Redis. */
    public void redisProperties(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.url", redis::url);
    }

    /** Route {@code index} of a {@code @SpringBootTest} gateway: requests matching {@code path} go to the stub. */
    public void route(DynamicPropertyRegistry registry, int index, String id, String path) {
        TestRoutes.route(registry, index, id, path, upstream::uri);
    }

    /** A gateway of its own on this fixture's Redis, /api/** routed to the stub; see {@link GatewayInstance}. */
    public ConfigurableApplicationContext start(String... properties) {
        return GatewayInstance.start(redis.url(), upstream.uri(), properties);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        redis.beforeAll(context);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        if (!cleanBeforeEach) {
            return;
        }
        if (redis.server().isRunning()) {
            redis.command("FLUSHALL");
        }
        upstream.reset();
    }

    /**
     * The stub stops now; Redis, brought back if a test left it killed, once the class has ended: the test classes
     * close their context ({@code @DirtiesContext}) after this callback, and a Lettuce client shut down while its Redis
     * is gone can wait for ever (see {@code ClosedAfterTheClass}).
     */
    @Override
    public void afterAll(ExtensionContext context) {
        upstream.close();
        if (!redis.server().isRunning()) {
            redis.server().restart();
        }
        redis.afterAll(context);
    }
}

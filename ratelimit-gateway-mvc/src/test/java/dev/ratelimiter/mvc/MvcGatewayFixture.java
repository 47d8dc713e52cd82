package dev.ratelimiter.mvc;

import java.time.Duration;

import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A real redis-server and a counting stub upstream for a test class's MVC gateway: before each test an empty Redis (if
 * it runs) and a stub that counted nothing; the stub stops after the class, Redis once the class has ended, after the
 * {@code @DirtiesContext} context closed on a live server (see {@code ClosedAfterTheClass}). A test that pauses Redis
 * resumes it itself.
 */
final class MvcGatewayFixture implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

    private final RedisServerExtension redis;
    private final StubUpstream upstream = StubUpstream.start();

    /** With a Redis of the class's own, one it may pause. */
    MvcGatewayFixture() {
        this(new RedisServerExtension());
    }

    private MvcGatewayFixture(RedisServerExtension redis) {
        this.redis = redis;
    }

    /**
     * On the test JVM's shared Redis, emptied before the class ({@link RedisServerExtension#shared()}): for a class that
     * never pauses or kills it and whose context is closed when it ends ({@code @DirtiesContext}); a context left in the
     * cache would keep its instance heartbeat in the shared Redis, counted by the next class's gateway.
     */
    static MvcGatewayFixture onSharedRedis() {
        return new MvcGatewayFixture(RedisServerExtension.shared());
    }

    RedisServerExtension redis() {
        return redis;
    }

    StubUpstream upstream() {
        return upstream;
    }

    void redisProperties(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.url", redis::url);
        registry.add("ratelimit.store.type", () -> "redis");
    }

    /** Route {@code index} to the stub; returns the route's property prefix (for its metadata). */
    String route(DynamicPropertyRegistry registry, int index, String id, String path) {
        return MvcRoutes.route(registry, index, id, path, upstream::uri);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        redis.beforeAll(context);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        if (redis.server().isRunning()) {
            redis.command("FLUSHALL");
        }
        awaitUpstreamIdle();
        upstream.reset();
    }

    /**
     * Calls an earlier test left in progress (a slow upstream behind a timeout) finish first, at most 15 s: counted
     * after the reset, they would be the next test's.
     */
    private void awaitUpstreamIdle() {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (upstream.inFlight() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        upstream.close();
        redis.afterAll(context);
    }
}

package dev.ratelimiter.gateway;

import java.time.Duration;

import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The limiter's own Redis connection across the application's lifecycle. Spring's test context cache pauses a context
 * (stops its lifecycle beans) whenever another one is loaded, and restarts it when it is used again; a context can
 * also be stopped and started by hand. The connection factory's Lettuce client is shut down on stop and a new one is
 * made on start: the limiter's connection must be closed before, and opened on the new client after.
 */
class ContextStopAndStartTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTests();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    @Test
    void afterAStopAndAStartDecisionsAreMadeInRedisAgainOnTheSameBuckets() {
        redis.command("FLUSHALL");
        try (ConfigurableApplicationContext context = start()) {
            WebTestClient client = GatewayInstance.client(context);
            assertThat(remaining(client)).isEqualTo("4");
            assertThat(remaining(client)).isEqualTo("3");

            context.stop();
            assertThat(context.getBean(LimiterConnection.class).connected()).as("closed on stop").isFalse();
            context.start();
            awaitConnected(context);
            client = GatewayInstance.client(context); // the web server was started again, on a new port

            // A decision of the fallback would start from a full local share (4 left): 2 is Redis's bucket.
            assertThat(remaining(client)).as("the same bucket, in Redis").isEqualTo("2");
        }
    }

    @Test
    void aContextWhoseRedisIsGoneStillClosesPromptly() {
        ConfigurableApplicationContext context = start();
        assertThat(remaining(GatewayInstance.client(context))).isNotNull();
        redis.server().kill();
        try {
            // Stopping makes the factory shut its client down while ours has been reconnecting for a while.
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                Thread.sleep(1_500);
                context.close();
            });
            assertThat(context.isActive()).isFalse();
        }
        finally {
            redis.server().restart();
        }
    }

    private static void awaitConnected(ConfigurableApplicationContext context) {
        LimiterConnection connection = context.getBean(LimiterConnection.class);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!connection.connected() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(connection.connected()).as("open again within 10 s of the start").isTrue();
    }

    private static String remaining(WebTestClient client) {
        return client.get().uri("/api/x").header("X-API-Key", "lifecycle").exchange().expectStatus().isOk()
                .returnResult(String.class).getResponseHeaders().getFirst("X-RateLimit-Remaining");
    }

    private static ConfigurableApplicationContext start() {
        return GatewayInstance.start(redis.url(), upstream.uri(),
                "ratelimit.store.type=redis",
                "ratelimit.store.timeout=1s",
                "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=5",
                "ratelimit.tiers.free.limits.default.refill-tokens=5",
                "ratelimit.tiers.free.limits.default.refill-period=1h");
    }
}

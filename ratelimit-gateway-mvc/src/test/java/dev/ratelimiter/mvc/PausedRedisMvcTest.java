package dev.ratelimiter.mvc;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.testsupport.RawResponse;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A frozen Redis (connections open, nothing answered) costs a servlet thread the store timeout, never Lettuce's 2 s
 * command timeout: requests through the MVC gateway still answer, from the fallback, each well within a generous
 * bound.
 */
@DirtiesContext
@SpringBootTest(classes = TestMvcGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class PausedRedisMvcTest {

    /** Far above the store timeout and the backstop (300 ms), far below the 2 s a command could otherwise wait. */
    private static final Duration GENEROUS = Duration.ofMillis(500);

    @RegisterExtension
    static final MvcGatewayFixture fixture = new MvcGatewayFixture();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    @LocalServerPort
    int port;

    @Autowired
    RateLimitStore store;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("spring.data.redis.timeout", () -> "2s");
        registry.add("ratelimit.store.timeout", () -> "100ms");
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "1000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1000");
        registry.add("server.address", () -> "127.0.0.1");
        registry.add("management.endpoints.web.exposure.include", () -> "health,ratelimit,ratelimitcontrol");
    }

    @AfterEach
    void thaw() {
        if (!redis.server().isRunning()) {
            redis.server().resume();
        }
    }

    /**
     * A kill switch Redis does not answer in time was sent all the same, and comes on when Redis answers again: the
     * operator was once told "nothing changed". The answer must say the switch may or may not be on.
     */
    @Test
    void aSwitchWriteThatTimesOutIsAnsweredAsMaybeAppliedAndIsInForceOnceRedisAnswers() throws Exception {
        // Redis knows the write script first (a fresh Redis does not): sent by SHA, a script Redis does not know is
        // answered NOSCRIPT on resuming and sent again by body only if Lettuce (2 s) has not given up on the first
        // call by then, so whether the switch comes on would depend on how long the pause lasted (flaky, seen).
        RawResponse warm = RawResponse.send(port, "POST", "/actuator/ratelimitcontrol", "application/json",
                "{\"killSwitch\":false}".getBytes(StandardCharsets.UTF_8));
        assertThat(warm.status()).as(warm.body()).isEqualTo(200);
        byte[] on = "{\"killSwitch\":true}".getBytes(StandardCharsets.UTF_8);
        RawResponse timedOut;
        redis.server().pause();
        try {
            timedOut = RawResponse.send(port, "POST", "/actuator/ratelimitcontrol", "application/json", on);
        }
        finally {
            redis.server().resume();
        }
        try {
            assertThat(timedOut.status()).as(timedOut.body()).isEqualTo(503);
            assertThat(timedOut.body()).contains("\"error\":\"rule_store_outcome_unknown\"")
                    .contains("may or may not have been applied").doesNotContain("nothing changed");
            // what the answer warned of: the switch reached Redis and is on now that it answers
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            String view;
            do {
                view = RawResponse.send(port, "GET", "/actuator/ratelimit", null, new byte[0]).body();
            } while (!view.contains("\"killSwitch\":true") && System.nanoTime() < deadline);
            assertThat(view).contains("\"killSwitch\":true");
        }
        finally {
            // sent after the paused write on the same connection, so it lands after it: the other tests limit again
            RawResponse.send(port, "POST", "/actuator/ratelimitcontrol", "application/json",
                    "{\"killSwitch\":false}".getBytes(StandardCharsets.UTF_8));
        }
    }

    /**
     * The operator endpoints on the application's port, on loopback without credentials: a request naming another
     * host (a web page's, through DNS rebinding) is refused there, and the gateway's routes, which a proxy in front may
     * reach with the client's Host, are not touched.
     */
    @Test
    void anotherHostNameReachesTheRoutesButNotTheOperatorEndpoints() throws Exception {
        String evil = "Host: evil.example:" + port;
        RawResponse kill = RawResponse.send(port, "POST", "/actuator/ratelimitcontrol", "application/json",
                "{\"killSwitch\":true}".getBytes(StandardCharsets.UTF_8), evil);
        assertThat(kill.status()).isEqualTo(403);
        assertThat(kill.body()).contains("\"error\":\"host_not_loopback\"");
        for (String path : List.of("/actuator/ratelimitcontrol/", "//actuator/ratelimitcontrol",
                "/actuator//ratelimitcontrol", "/actuator/ratelimitcontrol;x=1", "/actuator/%72atelimitcontrol",
                "/ACTUATOR/ratelimitcontrol", "/actuator/./ratelimitcontrol", "/actuator/health/../ratelimitcontrol",
                "/actuator/health/%2e%2e/ratelimitcontrol")) {
            assertThat(RawResponse.send(port, "POST", path, "application/json",
                    "{\"killSwitch\":true}".getBytes(StandardCharsets.UTF_8), evil).status()).as(path)
                    .isNotEqualTo(200);
        }
        assertThat(RawResponse.send(port, "GET", "/actuator/ratelimit", null, new byte[0], evil).status())
                .isEqualTo(403);
        assertThat(RawResponse.send(port, "GET", "/api/rebound", null, new byte[0], evil, "X-API-Key: rebound")
                .status()).isEqualTo(200);
        assertThat(RawResponse.send(port, "GET", "/actuator/ratelimit", null, new byte[0]).body())
                .contains("\"killSwitch\":false");
    }

    @Test
    void withRedisPausedRequestsAreAnsweredFromTheFallbackWithinTheStoreTimeout() throws Exception {
        Http http = new Http(port);
        assertThat(http.get("/api/warm", "key-paused").statusCode()).as("Redis answering").isEqualTo(200);
        redis.server().pause();
        for (int i = 0; i < 5; i++) {
            long start = System.nanoTime();
            HttpResponse<String> response = http.get("/api/frozen", "key-paused");
            Duration took = Duration.ofNanos(System.nanoTime() - start);

            assertThat(response.statusCode()).as("request " + i).isEqualTo(200);
            assertThat(took).as("request " + i + " waited").isLessThan(GENEROUS);
        }
        assertThat(upstream.hits("/api/frozen")).isEqualTo(5);
        assertThat(store.find(FailSafeStore.class).orElseThrow().fallbackDecisions()).as("decided without Redis")
                .isPositive();
    }
}

package dev.ratelimiter.gateway;

import java.io.IOException;
import java.util.Set;
import java.util.TreeSet;

import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keys nobody listed, under the reject policy: refused before any store call; the kill switch still lets all in,
 * requests without a key included.
 */
class UnknownApiKeysRejectedIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    static ConfigurableApplicationContext gateway;
    static int port;

    @BeforeAll
    static void start() {
        gateway = GatewayInstance.start(redis.url(), upstream.uri(),
                "management.endpoints.web.exposure.include=ratelimitcontrol",
                "ratelimit.store.timeout=2s",
                "ratelimit.default-tier=free",
                "ratelimit.tiers.free.api-keys=known-key",
                "ratelimit.tiers.free.limits.default.capacity=100",
                "ratelimit.tiers.free.limits.default.refill-tokens=100",
                "ratelimit.tiers.free.limits.default.refill-period=1s",
                "ratelimit.api-key.unknown.policy=reject",
                "ratelimit.api-key.unknown.status=403");
        port = GatewayInstance.port(gateway);
    }

    @AfterAll
    static void stop() {
        gateway.close();
        upstream.close();
    }

    @Test
    void anUnknownKeyIsRefusedWithoutTouchingTheStoreAndAKnownOneIsServed() throws IOException {
        assertThat(RawHttp.get(port, "/api/x", "X-API-Key: known-key")).isEqualTo(200);
        Set<String> before = keys();
        long hits = upstream.hits();
        for (int i = 0; i < 200; i++) {
            assertThat(RawHttp.get(port, "/api/x", "X-API-Key: unknown-" + i)).isEqualTo(403);
        }
        assertThat(keys()).isEqualTo(before);
        assertThat(upstream.hits()).isEqualTo(hits);
        GatewayInstance.client(gateway).get().uri("/api/x").header("X-API-Key", "stranger").exchange()
                .expectStatus().isForbidden()
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody().jsonPath("$.error").isEqualTo("unknown_api_key");
    }

    @Test
    void theKillSwitchLetsUnknownKeysThroughToo() throws IOException {
        GatewayInstance.client(gateway).post().uri("/actuator/ratelimitcontrol")
                .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"killSwitch\": true}").exchange()
                .expectStatus().isOk();
        try {
            assertThat(RawHttp.get(port, "/api/x", "X-API-Key: unknown-under-kill-switch")).isEqualTo(200);
            assertThat(RawHttp.get(port, "/api/x")).as("keyless, under when-missing: reject").isEqualTo(200);
        }
        finally {
            GatewayInstance.client(gateway).post().uri("/actuator/ratelimitcontrol")
                    .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"killSwitch\": false}").exchange()
                    .expectStatus().isOk();
        }
        assertThat(RawHttp.get(port, "/api/x", "X-API-Key: unknown-under-kill-switch")).isEqualTo(403);
        assertThat(RawHttp.get(port, "/api/x")).isEqualTo(401);
    }

    static Set<String> keys() {
        // the buckets (rl:{<client>}:<rule>@<shape>); instance heartbeats come and go on their own
        return new TreeSet<>(redis.command("KEYS", "rl:{*}:*@*").lines().filter(line -> !line.isBlank()).toList());
    }
}

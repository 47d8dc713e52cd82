package dev.ratelimiter.gateway;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.ratelimiter.testsupport.LoopbackPorts;
import dev.ratelimiter.testsupport.RawResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operator endpoints and the rules API on a management port bound to loopback without authentication, as the
 * sample runs them: a web page open on this host cannot use them, neither through a name of its site that resolves to
 * 127.0.0.1 (DNS rebinding: the request names that site in Host) nor by a cross-site request (its Origin); curl,
 * probes and port-forwards, which address loopback, are answered as before.
 */
class LoopbackOperatorPortIntegrationTest {

    static final String KILL = "{\"killSwitch\": true}";

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTests();

    static ConfigurableApplicationContext gateway;
    static int managementPort;

    @BeforeAll
    static void start() {
        managementPort = LoopbackPorts.free();
        gateway = fixture.start("management.server.port=" + managementPort, "management.server.address=127.0.0.1",
                "management.endpoints.web.exposure.include=health,ratelimit,ratelimitcontrol",
                "ratelimit.store.type=redis");
        GatewayInstance.awaitRedis(gateway);
    }

    @AfterAll
    static void stop() {
        gateway.close();
    }

    @Test
    void aRequestNamingAnotherHostNeitherSwitchesTheLimiterOffNorReadsOrWritesRules() throws IOException {
        String evil = "Host: evil.example:" + managementPort;
        RawResponse kill = send("POST", "/actuator/ratelimitcontrol", KILL, evil);
        assertThat(kill.status()).isEqualTo(403);
        assertThat(kill.headers().get("content-type")).startsWith("application/problem+json");
        assertThat(kill.body()).contains("\"error\":\"host_not_loopback\"");
        assertThat(send("GET", "/v1/rules", "", evil).status()).isEqualTo(403);
        assertThat(send("PUT", "/v1/rules/planted", "{\"capacity\": 1, \"refillTokens\": 1}", evil,
                "If-None-Match: *").status()).isEqualTo(403);
        assertThat(send("GET", "/actuator/ratelimit", "", evil).status()).isEqualTo(403);
        assertThat(send("GET", "/actuator/health", "", evil).status()).isEqualTo(403);

        RawResponse view = send("GET", "/actuator/ratelimit", "");
        assertThat(view.status()).isEqualTo(200);
        assertThat(view.body()).contains("\"killSwitch\":false").doesNotContain("planted");
    }

    @Test
    void aPageOfAnotherSiteIsRefusedEvenWhenItAddressesLoopback() throws IOException {
        for (String origin : List.of("Origin: http://evil.example", "Origin: null")) {
            RawResponse kill = send("POST", "/actuator/ratelimitcontrol", KILL, origin);
            assertThat(kill.status()).as(origin).isEqualTo(403);
            assertThat(kill.body()).contains("\"error\":\"cross_site_request\"");
        }
        assertThat(send("GET", "/v1/rules", "", "Origin: https://evil.example").status()).isEqualTo(403);
        assertThat(send("GET", "/actuator/ratelimit", "").body()).contains("\"killSwitch\":false");
    }

    @Test
    void requestsAddressedToLoopbackAreAnsweredAsBefore() throws IOException {
        for (String host : List.of("localhost", "localhost:" + managementPort, "127.0.0.1:" + managementPort,
                "127.0.0.2", "[::1]:" + managementPort)) {
            assertThat(send("GET", "/actuator/ratelimit", "", "Host: " + host).status()).as(host).isEqualTo(200);
            assertThat(send("GET", "/v1/rules", "", "Host: " + host).status()).as(host).isEqualTo(200);
        }
        assertThat(send("GET", "/v1/rules", "", "Origin: http://localhost:3000").status()).isEqualTo(200);
    }

    private static RawResponse send(String method, String path, String body, String... headers) throws IOException {
        return RawResponse.send(managementPort, method, path, body.isEmpty() ? null : "application/json",
                body.getBytes(StandardCharsets.UTF_8), headers);
    }
}

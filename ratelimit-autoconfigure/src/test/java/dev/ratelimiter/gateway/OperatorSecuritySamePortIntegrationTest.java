package dev.ratelimiter.gateway;

import java.io.IOException;
import java.util.List;

import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Without a management port of its own, the endpoints share the gateway's port: the filter then guards the
 * endpoints' paths only, and the routes stay as open as they were.
 */
class OperatorSecuritySamePortIntegrationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final StubUpstream upstream = StubUpstream.start();

    static ConfigurableApplicationContext gateway;
    static int port;

    @BeforeAll
    static void start() {
        gateway = GatewayInstance.start(redis.url(), upstream.uri(),
                "management.endpoints.web.exposure.include=health,ratelimit,ratelimitcontrol",
                "ratelimit.management.security.enabled=true",
                "ratelimit.management.security.admin.password=admin-secret-0123");
        port = GatewayInstance.port(gateway);
    }

    @AfterAll
    static void stop() {
        gateway.close();
        upstream.close();
    }

    @Test
    void theEndpointsAskForCredentialsAndTheRoutesDoNot() throws IOException {
        for (String path : List.of("/actuator/ratelimitcontrol", "/actuator/ratelimitcontrol/",
                "/actuator//ratelimitcontrol", "/actuator/ratelimitcontrol;a=b", "/actuator/%72atelimitcontrol",
                "/api/../actuator/ratelimitcontrol", "/api/%2e%2e/actuator/ratelimitcontrol")) {
            assertThat(RawHttp.send(port, "POST", path, "{\"killSwitch\": true}")).as(path).isIn(400, 401, 404);
        }
        assertThat(RawHttp.get(port, "/actuator/ratelimit")).isEqualTo(401);
        assertThat(RawHttp.get(port, "/actuator/health")).isEqualTo(200);
        assertThat(RawHttp.get(port, "/api/x", "X-API-Key: k")).isEqualTo(200);
        assertThat(RawHttp.get(port, "/actuator/ratelimit", OperatorSecurityIntegrationTest.basic("ratelimit-admin",
                "admin-secret-0123"))).isEqualTo(200);
    }
}

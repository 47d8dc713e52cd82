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
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    static ConfigurableApplicationContext gateway;
    static int port;

    @BeforeAll
    static void start() {
        gateway = GatewayInstance.start(redis.url(), upstream.uri(),
                "management.endpoints.web.exposure.include=health,ratelimit,ratelimitcontrol",
                // a route into the endpoints: forward: is dispatched inside the server, past every web filter
                "spring.cloud.gateway.server.webflux.routes[1].id=sneaky",
                "spring.cloud.gateway.server.webflux.routes[1].uri=forward:/actuator/ratelimitcontrol",
                "spring.cloud.gateway.server.webflux.routes[1].predicates[0]=Path=/kill/**",
                "spring.cloud.gateway.server.webflux.routes[2].id=sneaky-read",
                "spring.cloud.gateway.server.webflux.routes[2].uri=forward:/actuator/ratelimit",
                "spring.cloud.gateway.server.webflux.routes[2].predicates[0]=Path=/peek/**",
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
    void aRouteThatForwardsIntoTheEndpointsReachesNoWriteAndNoRead() throws IOException {
        assertThat(RawHttp.send(port, "POST", "/kill", "{\"killSwitch\": true}", "X-API-Key: attacker"))
                .isEqualTo(403);
        assertThat(RawHttp.get(port, "/peek", "X-API-Key: attacker")).isEqualTo(403);
        String view = GatewayInstance.client(gateway).get().uri("/actuator/ratelimit")
                .header("Authorization", OperatorSecurityIntegrationTest.credentials("ratelimit-admin",
                        "admin-secret-0123"))
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        assertThat(view).contains("\"killSwitch\":false");
    }

    @Test
    void theRulesApiIsNotServedOnTheApplicationsPortUnlessSwitchedOn() throws IOException {
        assertThat(RawHttp.get(port, "/actuator/v1/rules", "X-API-Key: nobody")).isEqualTo(404);
        assertThat(RawHttp.send(port, "PUT", "/actuator/v1/rules/x", "{\"capacity\": 1}", "If-Match: *"))
                .isEqualTo(404);
        assertThat(RawHttp.get(port, "/v1/rules", "X-API-Key: nobody")).isEqualTo(404);
    }

    @Test
    void theRoutesSeeNoneOfSpringSecuritysFirewall() throws IOException {
        // paths and methods the gateway routes as they are, and Spring Security's firewall would refuse
        for (String path : List.of("/api/a;b", "/api/a%2Fb", "/api//x", "/api/%25", "/api/a%3Bb", "/api/%2e/x")) {
            assertThat(RawHttp.get(port, path, "X-API-Key: firewall")).as(path).isEqualTo(200);
        }
        assertThat(RawHttp.send(port, "PROPFIND", "/api/x", "", "X-API-Key: firewall")).isEqualTo(200);
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

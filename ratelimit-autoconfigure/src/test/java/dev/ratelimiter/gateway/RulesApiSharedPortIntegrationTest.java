package dev.ratelimiter.gateway;

import java.io.IOException;
import java.util.List;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static dev.ratelimiter.gateway.RulesApiClient.IF_NONE_MATCH;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rules API on the gateway's own port (no management port), switched on explicitly: below the actuator's base
 * path, authenticated there, with the gateway's routes as open as they were - a route of the API's public-looking
 * path goes upstream, a route into the actuator's path does not shadow the API, and a route that forwards into the
 * API inside the server gets no further than the role check.
 */
class RulesApiSharedPortIntegrationTest {

    static final String PASSWORD = "admin-secret-0123";
    static final String VIEWER_PASSWORD = "viewer-secret-0123";

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTests();
    static final StubUpstream upstream = fixture.upstream();

    static ConfigurableApplicationContext gateway;
    static int port;
    static RulesApiClient api;

    @BeforeAll
    static void start() {
        String stub = upstream.uri();
        // a loaded test machine misses the 5 ms default store timeout, and the local failure mode's buckets are larger
        gateway = fixture.start("ratelimit.rules-api.enabled=true", "ratelimit.store.timeout=2s",
                "management.endpoints.web.exposure.include=health,ratelimit",
                "ratelimit.management.security.enabled=true",
                "ratelimit.management.security.admin.password=" + PASSWORD,
                "ratelimit.management.security.viewer.password=" + VIEWER_PASSWORD,
                "spring.cloud.gateway.server.webflux.routes[1].id=upstream-rules",
                "spring.cloud.gateway.server.webflux.routes[1].uri=" + stub,
                "spring.cloud.gateway.server.webflux.routes[1].predicates[0]=Path=/v1/rules/**",
                "spring.cloud.gateway.server.webflux.routes[2].id=sneaky",
                "spring.cloud.gateway.server.webflux.routes[2].uri=forward:/actuator/v1/rules/sneaked",
                "spring.cloud.gateway.server.webflux.routes[2].predicates[0]=Path=/sneak/**",
                "spring.cloud.gateway.server.webflux.routes[3].id=shadow",
                "spring.cloud.gateway.server.webflux.routes[3].uri=" + stub,
                "spring.cloud.gateway.server.webflux.routes[3].predicates[0]=Path=/actuator/v1/**");
        port = GatewayInstance.port(gateway);
        GatewayInstance.awaitRedis(gateway);
        api = new RulesApiClient(port, "/actuator/v1/rules");
    }

    @AfterAll
    static void stop() throws IOException {
        try {
            String served = api.as("ratelimit-viewer", VIEWER_PASSWORD).get().uri(api.path() + "/_openapi.yaml")
                    .exchange().expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
            assertThat(served).contains("\n  /actuator/v1/rules/{ruleId}:\n").doesNotContain("\n  /v1/rules");
            try (var in = RulesApiSharedPortIntegrationTest.class.getClassLoader()
                    .getResourceAsStream("META-INF/ratelimit/rules-api.openapi.yaml")) {
                assertThat(RulesApiClient.undocumented(new String(in.readAllBytes(),
                        java.nio.charset.StandardCharsets.UTF_8))).isEmpty();
            }
        }
        finally {
            gateway.close();
        }
    }

    static String bucket(int capacity) {
        return "{\"match\": {\"routes\": [\"api\"]}, \"capacity\": " + capacity
                + ", \"refillTokens\": 1, \"refillPeriod\": \"1h\"}";
    }

    @Test
    void theApiIsServedBelowTheActuatorsBasePathForTheOperatorsOnly() throws IOException {
        WebTestClient admin = api.as("ratelimit-admin", PASSWORD);
        WebTestClient viewer = api.as("ratelimit-viewer", VIEWER_PASSWORD);
        api.as(null, null).get().uri(api.path()).exchange().expectStatus().isUnauthorized();
        viewer.put().uri(api.rule("shared")).contentType(MediaType.APPLICATION_JSON).header(IF_NONE_MATCH, "*")
                .bodyValue(bucket(2)).exchange().expectStatus().isForbidden();
        assertThat(api.put(admin, "shared", bucket(2), IF_NONE_MATCH, "*").getStatus().value()).isEqualTo(200);
        viewer.get().uri(api.rule("shared")).exchange().expectStatus().isOk().expectHeader().exists("ETag")
                .expectBody().jsonPath("$.capacity").isEqualTo(2);
        List<Integer> statuses = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            statuses.add(RawHttp.get(port, "/api/x", "X-API-Key: shared-port-caller"));
        }
        assertThat(statuses).containsExactly(200, 200, 429);
    }

    @Test
    void theGatewaysRoutesKeepTheirPathsAndNoneReachesTheApi() throws IOException {
        long before = upstream.hits();
        // the seeds' public-looking path is the gateway's: routed upstream, never the API
        assertThat(RawHttp.get(port, "/v1/rules", "X-API-Key: public")).isEqualTo(200);
        assertThat(upstream.hits()).isEqualTo(before + 1);
        // a route into the actuator's path does not shadow the API
        api.as("ratelimit-viewer", VIEWER_PASSWORD).get().uri(api.path()).exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.version").exists();
        assertThat(upstream.hits()).isEqualTo(before + 1);
        // forward: is dispatched inside the server, past the filter: the handler's own role check refuses it
        assertThat(RawHttp.send(port, "PUT", "/sneak", bucket(1), "X-API-Key: attacker", "If-Match: *"))
                .isEqualTo(403);
        for (String path : List.of("/actuator/v1/rules/sneaked", "/actuator/v1/rules/sneaked/",
                "/actuator/v1//rules/sneaked", "/actuator/v1/rules/sneaked;x=1", "/actuator/v1/rules/%73neaked",
                "/actuator/v1/rules/../rules/sneaked", "/ACTUATOR/v1/rules/sneaked")) {
            long upstreamBefore = upstream.hits();
            int status = RawHttp.send(port, "PUT", path, bucket(1), "If-None-Match: *");
            boolean wentUpstream = upstream.hits() > upstreamBefore;
            // refused before the API, or a path the API does not have that the shadow route took upstream
            assertThat(status == 400 || status == 401 || status == 404 || wentUpstream && status == 200)
                    .as(path + " -> " + status).isTrue();
        }
        api.as("ratelimit-viewer", VIEWER_PASSWORD).get().uri(api.rule("sneaked")).exchange().expectStatus()
                .isNotFound();
    }
}

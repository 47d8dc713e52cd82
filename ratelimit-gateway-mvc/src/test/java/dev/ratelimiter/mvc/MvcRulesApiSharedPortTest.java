package dev.ratelimiter.mvc;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rules API on the application's own port ({@code ratelimit.rules-api.enabled=true}) beside a gateway route that
 * claims {@code /actuator/**}: the API keeps its paths, as on WebFlux, and the route keeps everything else under it.
 */
@SpringBootTest(classes = TestMvcGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcRulesApiSharedPortTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = new MvcGatewayFixture();
    static final StubUpstream upstream = fixture.upstream();

    private static final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("server.address", () -> "127.0.0.1");
        registry.add("ratelimit.rules-api.enabled", () -> "true");
        fixture.route(registry, 0, "actuator-everything", "/actuator/**");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "100000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "100000");
    }

    @Test
    void theApiAnswersItsOwnPathsAndTheRouteTheRest() throws Exception {
        HttpResponse<String> rules = get("/actuator/v1/rules");
        assertThat(rules.statusCode()).as(rules.body()).isEqualTo(200);
        JsonNode body = JsonMapper.builder().build().readTree(rules.body());
        assertThat(body.get("rules").isArray()).as(rules.body()).isTrue();
        assertThat(body.get("rules").toString()).contains("\"id\":\"free.default\"");
        assertThat(rules.headers().firstValue("ETag")).isPresent();
        HttpResponse<String> unknown = get("/actuator/v1/rules/a/b");
        assertThat(unknown.statusCode()).as("the API's own 404, not the route").isEqualTo(404);
        assertThat(upstream.hits()).as("nothing under the API's paths reached the upstream").isZero();

        HttpResponse<String> elsewhere = get("/actuator/other");
        assertThat(elsewhere.statusCode()).isEqualTo(200);
        assertThat(upstream.hits()).isEqualTo(1);
    }

    private HttpResponse<String> get(String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("X-API-Key", "key-a").timeout(Duration.ofSeconds(10)).GET().build();
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }
}

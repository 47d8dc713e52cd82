package dev.ratelimiter.mvc;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;

import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.testsupport.RawResponse;
import dev.ratelimiter.testsupport.StubUpstream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The operator endpoints and the rules API on the application's own port, authenticated by the limiter's servlet
 * filter (as the WebFlux flavour's are), beside a gateway route that needs no operator credentials. The server binds
 * loopback only; {@code ratelimit.management.security.enabled=true} asks for what an address beyond it would.
 */
@SpringBootTest(classes = TestMvcGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcOperatorSecurityIntegrationTest {

    private static final String ADMIN_PASSWORD = "admin-password-1234";

    private static final String VIEWER_PASSWORD = "viewer-password-1234";

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
        registry.add("ratelimit.management.security.enabled", () -> "true");
        registry.add("ratelimit.management.security.admin.password", () -> ADMIN_PASSWORD);
        registry.add("ratelimit.management.security.viewer.password", () -> VIEWER_PASSWORD);
        registry.add("management.endpoints.web.exposure.include", () -> "health,ratelimit,ratelimitcontrol,env");
        registry.add("ratelimit.rules-api.enabled", () -> "true");
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "100000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "100000");
    }

    @Test
    void theEndpointsAndTheRulesApiAskForAnOperatorAndTheGatewayRoutesDoNot() throws Exception {
        HttpResponse<String> anonymous = send("GET", "/actuator/ratelimit", null, null);
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(anonymous.headers().firstValue("WWW-Authenticate")).hasValue("Basic realm=\"Realm\"");
        assertThat(send("GET", "/actuator/v1/rules", null, null).statusCode()).isEqualTo(401);
        assertThat(send("GET", "/actuator/v1/rules", null, basic("ratelimit-admin", "wrong-password-123")).statusCode())
                .isEqualTo(401);
        assertThat(send("GET", "/actuator/v1/rules", null, basic("ratelimit-viewer", ADMIN_PASSWORD)).statusCode())
                .as("the admin's password under the viewer's name").isEqualTo(401);
        // path parameters and dot segments do not get around the filter
        assertThat(send("GET", "/actuator;x=1/ratelimit", null, null).statusCode()).isEqualTo(401);
        assertThat(send("GET", "/api/../actuator/v1/rules", null, null).statusCode()).isEqualTo(401);

        assertThat(send("GET", "/actuator/v1/rules", null, basic("ratelimit-viewer", VIEWER_PASSWORD)).statusCode())
                .isEqualTo(200);
        assertThat(send("HEAD", "/actuator/v1/rules", null, basic("ratelimit-viewer", VIEWER_PASSWORD)).statusCode())
                .as("HEAD is a read").isEqualTo(200);
        assertThat(send("GET", "/actuator/ratelimit", null, basic("ratelimit-viewer", VIEWER_PASSWORD)).statusCode())
                .isEqualTo(200);
        assertThat(send("GET", "/actuator", null, basic("ratelimit-viewer", VIEWER_PASSWORD)).statusCode())
                .as("the discovery page").isEqualTo(200);
        assertThat(send("GET", "/actuator/env", null, basic("ratelimit-viewer", VIEWER_PASSWORD)).statusCode())
                .as("below the discovery page, not the viewer's").isEqualTo(403);
        String rule = "{\"capacity\":5,\"refillTokens\":5,\"refillPeriod\":\"1h\",\"match\":{\"routeIds\":[\"x\"]}}";
        assertThat(send("PUT", "/actuator/v1/rules/viewers-rule", rule, basic("ratelimit-viewer", VIEWER_PASSWORD))
                .statusCode()).as("a read-only account cannot write").isEqualTo(403);
        assertThat(send("POST", "/actuator/ratelimitcontrol", "{\"killSwitch\": true}",
                basic("ratelimit-viewer", VIEWER_PASSWORD)).statusCode()).isEqualTo(403);
        HttpResponse<String> written = send("PUT", "/actuator/v1/rules/admins-rule", rule,
                basic("ratelimit-admin", ADMIN_PASSWORD), "If-None-Match", "*");
        assertThat(written.statusCode()).as(written.body()).isBetween(200, 201);
        assertThat(send("GET", "/actuator/v1/rules/admins-rule", null, basic("ratelimit-viewer", VIEWER_PASSWORD))
                .statusCode()).isEqualTo(200);

        assertThat(send("GET", "/actuator/health", null, null).statusCode()).as("a public endpoint").isEqualTo(200);
        HttpResponse<String> routed = send("GET", "/api/anything", null, null);
        assertThat(routed.statusCode()).as("the gateway's route needs no operator").isEqualTo(200);
        assertThat(upstream.hits()).isEqualTo(1);
    }

    /**
     * With {@code spring.mvc.servlet.path} the DispatcherServlet, and so the actuator and the rules API, are served
     * below it ({@code /gw/actuator/env}); the filter places a request by the path its servlet serves it at, so those
     * paths are guarded (and the admin's principal reaches the endpoints) whatever the servlet path, the context path
     * or the management port, while the gateway's routes below the servlet path still need no operator.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({ "servlet path,        /gw,     false, /gw/api",
            "context and servlet path, /ctx/gw, false, /ctx/gw/api",
            "management port,          '',      true,  /gw/api" })
    void belowAServletPathTheOperatorPathsStillAskForAnOperatorAndTheRoutesDoNot(String setting, String prefix,
            boolean managementPort, String routes) throws Exception {
        List<String> properties = new ArrayList<>(List.of("spring.mvc.servlet.path=/gw",
                "ratelimit.management.security.enabled=true",
                "ratelimit.management.security.admin.password=" + ADMIN_PASSWORD,
                "management.endpoints.web.exposure.include=health,ratelimit,ratelimitcontrol,env,loggers",
                "ratelimit.rules-api.enabled=true"));
        if (prefix.startsWith("/ctx")) {
            properties.add("server.servlet.context-path=/ctx");
        }
        if (managementPort) {
            properties.addAll(List.of("management.server.port=0", "management.server.address=127.0.0.1"));
        }
        String rules = managementPort ? "/v1/rules" : "/actuator/v1/rules";
        try (ConfigurableApplicationContext context = MvcGatewayApplications.start(fixture,
                properties.toArray(String[]::new))) {
            int operator = MvcGatewayApplications.port(context, managementPort);
            String admin = "Authorization: " + basic("ratelimit-admin", ADMIN_PASSWORD);
            for (String[] anonymous : new String[][] { { "GET", "/actuator/env" },
                    { "POST", "/actuator/loggers/ROOT" }, { "POST", "/actuator/ratelimitcontrol" },
                    { "GET", rules }, { "GET", "/actuator" } }) {
                RawResponse answer = raw(operator, anonymous[0], prefix + anonymous[1], "{\"killSwitch\":true}");
                assertThat(answer.status()).as(setting + ": " + anonymous[0] + " " + prefix + anonymous[1])
                        .isEqualTo(401);
                assertThat(answer.headers()).containsEntry("www-authenticate", "Basic realm=\"Realm\"");
            }
            assertThat(raw(operator, "GET", prefix + "/actuator/health", "").status()).as("public").isEqualTo(200);
            assertThat(raw(operator, "GET", prefix + rules, "", admin).status()).isEqualTo(200);
            assertThat(raw(operator, "POST", prefix + "/actuator/ratelimitcontrol", "{\"killSwitch\":true}", admin)
                    .status()).as(setting + ": the admin throws the kill switch").isEqualTo(200);
            assertThat(raw(operator, "POST", prefix + "/actuator/ratelimitcontrol", "{\"killSwitch\":false}", admin)
                    .status()).isEqualTo(200);
            RawResponse routed = raw(MvcGatewayApplications.port(context, false), "GET", routes + "/anything", "",
                    "X-API-Key: key-a");
            assertThat(routed.status()).as(setting + ": the gateway's route needs no operator: " + routed.body())
                    .isEqualTo(200);
            assertThat(upstream.hits()).isEqualTo(1);
        }
    }

    /**
     * The actuator exposes endpoint ids in any case and with dashes; so many spellings of the operator endpoints,
     * unauthenticated on every address without Spring Security, fail the start-up as the plain ids do, instead of
     * serving an anonymous kill switch.
     */
    @Test
    void operatorEndpointsExposedUnderAnotherSpellingWithoutAuthenticationFailTheStartUp() {
        assertThatThrownBy(() -> MvcGatewayApplications.startWithoutSpringSecurity(fixture, "server.address=0.0.0.0",
                "ratelimit.management.security.enabled=false",
                "management.endpoints.web.exposure.include=health,rateLimit,rate-limit-control").close())
                .rootCause().isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("ratelimit.management.security.enabled=false");
    }

    private static RawResponse raw(int port, String method, String path, String body, String... headers)
            throws Exception {
        return RawResponse.send(port, method, path, "application/json", body.getBytes(StandardCharsets.UTF_8),
                headers);
    }

    @Test
    void malformedAuthorizationHeadersAreAll401NeverAServerError() throws Exception {
        Random random = new Random(19);
        List<String> headers = new ArrayList<>(List.of("Basic", "Basic ", "Basic !!!!", "Basic ====",
                "Basic " + Base64.getEncoder().encodeToString("no-colon".getBytes(StandardCharsets.UTF_8)),
                "Basic " + Base64.getEncoder().encodeToString(":".getBytes(StandardCharsets.UTF_8)),
                "Basic " + Base64.getEncoder().encodeToString(new byte[] { (byte) 0xff, ':', (byte) 0xfe }),
                "Bearer abc", "basic", "Basic " + "A".repeat(6000), "Basic " + "%".repeat(6000),
                "Basic " + Base64.getEncoder().encodeToString(("ratelimit-admin:" + "x".repeat(4000))
                        .getBytes(StandardCharsets.UTF_8))));
        for (int i = 0; i < 60; i++) {
            byte[] bytes = new byte[1 + random.nextInt(200)];
            random.nextBytes(bytes);
            headers.add(i % 2 == 0 ? "Basic " + Base64.getEncoder().encodeToString(bytes)
                    : "Basic " + printable(bytes));
        }
        for (String header : headers) {
            assertThat(send("GET", "/actuator/v1/rules", null, header).statusCode()).as(header).isEqualTo(401);
            assertThat(send("POST", "/actuator/ratelimitcontrol", "{}", header).statusCode()).as(header)
                    .isEqualTo(401);
        }
    }

    /** Bytes the HTTP client accepts in a header value (visible ASCII). */
    private static String printable(byte[] bytes) {
        StringBuilder text = new StringBuilder();
        for (byte b : bytes) {
            text.append((char) (0x21 + Math.floorMod(b, 0x7e - 0x21)));
        }
        return text.toString();
    }

    private static String basic(String username, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((username + ":" + password)
                .getBytes(StandardCharsets.UTF_8));
    }

    private HttpResponse<String> send(String method, String path, @Nullable String body,
            @Nullable String authorization, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("X-API-Key", "key-a").timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        if (headers.length > 0) {
            request.headers(headers);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}

package dev.ratelimiter.mvc;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

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
import org.springframework.security.crypto.bcrypt.BCryptPasswordEncoder;
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

    /** The viewer's password as a bcrypt hash (cost 4: the reading is tested, not the hash's strength). */
    private static final String VIEWER_BCRYPT = "{bcrypt}" + new BCryptPasswordEncoder(4).encode(VIEWER_PASSWORD);

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
        // the admin's in {noop}, the viewer's in {bcrypt}: every test here logs in through Spring's encodings (the
        // plain value of before is the admin's in the servlet-path test's applications)
        registry.add("ratelimit.management.security.admin.password", () -> "{noop}" + ADMIN_PASSWORD);
        registry.add("ratelimit.management.security.viewer.password", () -> VIEWER_BCRYPT);
        registry.add("management.endpoints.web.exposure.include", () -> "health,ratelimit,ratelimitcontrol,env,loggers");
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
     * A {@code {noop}} and a {@code {bcrypt}} password log in (their encoded forms do not), and an unknown name and a
     * wrong password get the same answer, status, headers and body alike.
     */
    @Test
    void encodedPasswordsLogInAndAnUnknownNameIsAnsweredAsAWrongPassword() throws Exception {
        assertThat(send("GET", "/actuator/v1/rules", null, basic("ratelimit-admin", ADMIN_PASSWORD)).statusCode())
                .isEqualTo(200);
        assertThat(send("GET", "/actuator/v1/rules", null, basic("ratelimit-viewer", VIEWER_PASSWORD)).statusCode())
                .isEqualTo(200);
        assertThat(send("GET", "/actuator/v1/rules", null, basic("ratelimit-admin", "{noop}" + ADMIN_PASSWORD))
                .statusCode()).isEqualTo(401);
        assertThat(send("GET", "/actuator/v1/rules", null, basic("ratelimit-viewer", VIEWER_BCRYPT)).statusCode())
                .isEqualTo(401);
        HttpResponse<String> unknownName = send("GET", "/actuator/v1/rules", null, basic("nobody", VIEWER_PASSWORD));
        HttpResponse<String> wrongPassword = send("GET", "/actuator/v1/rules", null,
                basic("ratelimit-viewer", "wrong-password-1234"));
        assertThat(unknownName.statusCode()).isEqualTo(401);
        assertThat(wrongPassword.statusCode()).isEqualTo(401);
        assertThat(withoutDate(unknownName)).isEqualTo(withoutDate(wrongPassword))
                .containsEntry("www-authenticate", List.of("Basic realm=\"Realm\""));
        assertThat(unknownName.body()).isEqualTo(wrongPassword.body()).isEmpty();
    }

    private static Map<String, List<String>> withoutDate(HttpResponse<String> response) {
        Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        headers.putAll(response.headers().map());
        headers.remove("date");
        return headers;
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
            assertThat(reachedWithoutCredentials(operator, prefix)).as(setting).isEmpty();
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

    @Test
    void unNormalisedPathsNeverReachAnOperatorEndpointWithoutCredentials() throws Exception {
        assertThat(reachedWithoutCredentials(port, "")).isEmpty();
    }

    /** Paths a client can send un-normalised, as raw bytes: doubled slashes, path parameters, dot segments, escapes. */
    private static final List<String> UN_NORMALISED = List.of("//actuator//ratelimit", "/actuator//ratelimit",
            "/actuator;x=y/ratelimit", "/actuator/ratelimit;a=b", "/foo/../actuator/env", "/api/%2e%2e/actuator/env",
            "/%2e/actuator/env", "/actuator%2Fenv", "/actuator/env%2F", "/ACTUATOR/env", "/Actuator/env",
            "/actuator/env/", "/actuator/./env", "/actuator/health/../env", "/actuator/health/%2e%2e/env",
            "/actuator/health;/../env", "/actuator/health/..;/env", "/actuator/v1/rules/", "/actuator/v1//rules",
            "/actuator/v1/rules;x/x", "/actuator/health/../v1/rules", "/actuator/%76%31/rules", "/actuator/%65nv",
            "/actuator/health%2F..%2Fenv", "/actuator\\env", "/./actuator/env", "/actuator/env?x=/actuator/health",
            "/actuator/health?/../env", "/actuator/health#/../env");

    /**
     * Each un-normalised path below {@code prefix} (a servlet path too: with a path parameter, doubled), read and
     * written without credentials: those that reached anything but the public health, or failed with a 5xx. A 401,
     * a 400 or a 404 is what holds.
     */
    private static List<String> reachedWithoutCredentials(int port, String prefix) throws Exception {
        List<String> paths = new ArrayList<>();
        UN_NORMALISED.forEach(path -> paths.add(prefix + path));
        if (!prefix.isEmpty()) {
            paths.addAll(List.of(prefix + ";a=b/actuator/env", "/" + prefix + "/actuator/env",
                    prefix + "/../" + prefix.substring(1) + "/actuator/env"));
        }
        List<String> reached = new ArrayList<>();
        for (String path : paths) {
            for (String method : new String[] { "GET", "POST" }) {
                RawResponse answer = raw(port, method, path, method.equals("POST") ? "{\"configuredLevel\":\"OFF\"}"
                        : "");
                boolean publicHealth = answer.body().contains("\"status\":\"UP\"") || answer.body().contains("groups");
                if (answer.status() >= 500 || (answer.status() < 300 && !publicHealth)) {
                    reached.add(method + " " + path + " -> " + answer.status() + " " + head(answer.body()));
                }
            }
        }
        return reached;
    }

    /**
     * Odd requests on the rules API, from the admin: methods it does not serve, odd ids, documents, types and
     * preconditions, and a chunked body past its limit. Each is a 4xx (or a success), never a 5xx.
     */
    @Test
    void oddRulesApiRequestsNeverAnswer500() throws Exception {
        String rule = "{\"capacity\":5,\"refillTokens\":5,\"refillPeriod\":\"1h\",\"match\":{\"routeIds\":[\"x\"]}}";
        String admin = "Authorization: " + basic("ratelimit-admin", ADMIN_PASSWORD);
        String[][] probes = { { "HEAD", "/actuator/v1/rules", "" }, { "HEAD", "/actuator/v1/rules/free.default", "" },
                { "OPTIONS", "/actuator/v1/rules", "" }, { "OPTIONS", "/actuator/v1/rules/x", "" },
                { "PATCH", "/actuator/v1/rules/x", rule }, { "POST", "/actuator/v1/rules", rule },
                { "PUT", "/actuator/v1/rules/a%2Fb", rule }, { "PUT", "/actuator/v1/rules/%00", rule },
                { "PUT", "/actuator/v1/rules/%C3%A9", rule }, { "PUT", "/actuator/v1/rules/%FF", rule },
                { "PUT", "/actuator/v1/rules/..", rule }, { "PUT", "/actuator/v1/rules/_openapi.yaml", rule },
                { "PUT", "/actuator/v1/rules/" + "a".repeat(300), rule }, { "PUT", "/actuator/v1/rules/x", "{" },
                { "PUT", "/actuator/v1/rules/x", "[]" }, { "PUT", "/actuator/v1/rules/x", "null" },
                { "PUT", "/actuator/v1/rules/x", "{\"capacity\":1e999}" },
                { "PUT", "/actuator/v1/rules/x", "{\"a\":" + "[".repeat(5000) },
                { "PUT", "/actuator/v1/rules/x", "{\"capacity\":" + "9".repeat(400) + "}" },
                { "PUT", "/actuator/v1/rules/x", "x".repeat(300_000) },
                { "DELETE", "/actuator/v1/rules/free.default", "" }, { "DELETE", "/actuator/v1/rules/nope", "" } };
        List<String> failed = new ArrayList<>();
        for (String[] probe : probes) {
            for (String type : new String[] { "application/json", "text/plain", "application/json;charset=latin1" }) {
                for (String condition : new String[] { "If-Match: *", "If-None-Match: *", "If-Match: \"999\"",
                        "If-Match: W/\"1\"", "If-Match: garbage" }) {
                    RawResponse answer = RawResponse.send(port, probe[0], probe[1], type,
                            probe[2].getBytes(StandardCharsets.UTF_8), admin, condition);
                    if (answer.status() >= 500) {
                        failed.add(probe[0] + " " + head(probe[1]) + " " + type + " [" + condition + "] -> "
                                + answer.status() + " " + head(answer.body()));
                    }
                }
            }
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
            socket.setSoTimeout(15_000);
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.writeBytes(("PUT /actuator/v1/rules/chunky HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + admin
                    + "\r\nIf-None-Match: *\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = "x".repeat(65_536).getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < 6; i++) {
                request.writeBytes("10000\r\n".getBytes(StandardCharsets.US_ASCII));
                request.writeBytes(chunk);
                request.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
            }
            request.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(RawResponse.exchange(socket, request.toByteArray()).status()).as("a chunked 384 KiB document")
                    .isEqualTo(413);
        }
        assertThat(failed).isEmpty();
        assertThat(RawResponse.send(port, "GET", "/actuator/v1/rules", null, new byte[0], admin).status())
                .isEqualTo(200);
    }

    private static String head(String text) {
        return text.length() > 200 ? text.substring(0, 200) + "..." : text;
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

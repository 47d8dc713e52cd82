package dev.ratelimiter.mvc;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.ratelimiter.core.AbuseScores;
import dev.ratelimiter.testsupport.RawResponse;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The REST rules API on the MVC flavour, on a loopback management port as the WebFlux flavour serves it: a rule
 * created there is in force on the gateway's routes, writes need a precondition and a stale one loses, bad documents
 * are the same problems, and nothing on the API's paths falls through.
 */
@DirtiesContext
@SpringBootTest(classes = TestMvcGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcRulesApiIntegrationTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    private static final JsonMapper json = JsonMapper.builder().build();
    private static final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("management.server.port", () -> "0");
        registry.add("management.server.address", () -> "127.0.0.1");
        registry.add("management.endpoints.web.exposure.include", () -> "health,ratelimit,ratelimitcontrol");
        registry.add("ratelimit.rule-store.poll-interval", () -> "200ms");
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "100000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "100000");
        registry.add("ratelimit.abuse.enabled", () -> "true");
    }

    @BeforeEach
    void reset() {
        upstream.delay(Duration.ZERO);
    }

    @Test
    void aRuleCreatedThroughTheApiIsInForceOnTheRoutesAndAStaleWriteLoses() throws Exception {
        HttpResponse<String> before = send("GET", "/v1/rules", null, null);
        assertThat(before.statusCode()).isEqualTo(200);
        String version = before.headers().firstValue("ETag").orElseThrow();

        String rule = "{\"capacity\":2,\"refillTokens\":2,\"refillPeriod\":\"1h\",\"match\":{\"routeIds\":[\"api\"]}}";
        HttpResponse<String> created = send("PUT", "/v1/rules/two", rule, "If-None-Match", "*");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
        JsonNode body = json.readTree(created.body());
        assertThat(body.get("id").asString()).isEqualTo("two");
        assertThat(body.get("capacity").asLong()).isEqualTo(2);
        assertThat(created.headers().firstValue("ETag")).isPresent().isNotEqualTo(version);

        assertThat(gateway("key-a")).isEqualTo(200);
        assertThat(gateway("key-a")).isEqualTo(200);
        assertThat(gateway("key-a")).as("the API's rule limits the route").isEqualTo(429);
        assertThat(upstream.hits()).isEqualTo(2);

        HttpResponse<String> stale = send("PUT", "/v1/rules/two", rule, "If-Match", version);
        assertThat(stale.statusCode()).isEqualTo(412);
        assertThat(json.readTree(stale.body()).get("error").asString()).isEqualTo("precondition_failed");

        String current = send("GET", "/v1/rules/two", null, null).headers().firstValue("ETag").orElseThrow();
        HttpResponse<String> deleted = send("DELETE", "/v1/rules/two", null, "If-Match", current);
        assertThat(deleted.statusCode()).isEqualTo(204);
        assertThat(send("GET", "/v1/rules/two", null, null).statusCode()).isEqualTo(404);
    }

    /** The abuse scores below the rules, on the servlet flavour too: set, listed, refused when malformed, removed. */
    @Test
    void abuseScoresAreSetListedAndRemovedBelowTheRules(@Autowired AbuseScores scores) throws Exception {
        HttpResponse<String> put = send("PUT", "/v1/rules/_abuse-scores/mvc-client", "{\"factor\":0.2}", null);
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        assertThat(scores.factorFor("mvc-client")).isBetween(0.2, 0.25);
        assertThat(send("GET", "/v1/rules/_abuse-scores", null, null).body()).contains("\"client\":\"mvc-client\"");
        HttpResponse<String> refused = send("PUT", "/v1/rules/_abuse-scores/mvc-client", "{\"score\":\"NaN\"}", null);
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(json.readTree(refused.body()).get("error").asString()).isEqualTo("invalid_abuse_score");
        assertThat(send("DELETE", "/v1/rules/_abuse-scores/mvc-client", null, null).statusCode()).isEqualTo(204);
        assertThat(scores.factorFor("mvc-client")).isEqualTo(1.0);
    }

    /**
     * HEAD is a read and answers as GET does, without the body: the same status, ETag, type and length (the
     * container's), for the collection, a rule, a rule that is not there and the OpenAPI document.
     */
    @Test
    void headAnswersAsGetDoesWithoutABody() throws Exception {
        String rule = "{\"capacity\":2,\"refillTokens\":2,\"refillPeriod\":\"1h\",\"match\":{\"routeIds\":[\"x\"]}}";
        HttpResponse<String> created = send("PUT", "/v1/rules/headed", rule, "If-None-Match", "*");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
        try {
            for (String path : List.of("/v1/rules", "/v1/rules/headed", "/v1/rules/absent", "/v1/rules/_openapi.yaml")) {
                RawResponse get = RawResponse.send(managementPort, "GET", path, null, new byte[0]);
                RawResponse head = RawResponse.send(managementPort, "HEAD", path, null, new byte[0]);
                assertThat(head.status()).as("HEAD " + path + ", GET answers " + get.status()).isEqualTo(get.status());
                assertThat(head.body()).as("HEAD " + path).isEmpty();
                assertThat(head.headers()).as("HEAD " + path).containsKeys("content-type", "content-length");
                for (String name : List.of("etag", "content-type", "content-length")) {
                    assertThat(head.headers().get(name)).as(name + " of HEAD " + path)
                            .isEqualTo(get.headers().get(name));
                }
            }
        }
        finally {
            send("DELETE", "/v1/rules/headed", null, "If-Match", "*");
        }
        assertThat(RawResponse.send(managementPort, "HEAD", "/v1/rules", null, new byte[0]).headers())
                .containsKey("etag");
    }

    /**
     * No credentials on this port, so only requests addressed to loopback are answered: a web page on this host
     * cannot switch the limiter off or write rules through a name of its site that resolves to 127.0.0.1 (its Host),
     * nor by a cross-site request (its Origin), as on WebFlux.
     */
    @Test
    void aWebPageOnThisHostCannotUseTheOperatorPort() throws Exception {
        byte[] kill = "{\"killSwitch\": true}".getBytes(StandardCharsets.UTF_8);
        String evil = "Host: evil.example:" + managementPort;
        RawResponse rebound = RawResponse.send(managementPort, "POST", "/actuator/ratelimitcontrol",
                "application/json", kill, evil);
        assertThat(rebound.status()).isEqualTo(403);
        assertThat(rebound.headers().get("content-type")).startsWith("application/problem+json");
        assertThat(json.readTree(rebound.body()).get("error").asString()).isEqualTo("host_not_loopback");
        assertThat(RawResponse.send(managementPort, "GET", "/v1/rules", null, new byte[0], evil).status())
                .isEqualTo(403);
        assertThat(RawResponse.send(managementPort, "PUT", "/v1/rules/planted", "application/json",
                "{\"capacity\":1,\"refillTokens\":1}".getBytes(StandardCharsets.UTF_8), evil,
                "If-None-Match: *").status()).isEqualTo(403);
        RawResponse crossSite = RawResponse.send(managementPort, "POST", "/actuator/ratelimitcontrol",
                "application/json", kill, "Origin: http://evil.example");
        assertThat(crossSite.status()).isEqualTo(403);
        assertThat(json.readTree(crossSite.body()).get("error").asString()).isEqualTo("cross_site_request");

        for (String host : List.of("localhost:" + managementPort, "127.0.0.1", "[::1]:" + managementPort)) {
            assertThat(RawResponse.send(managementPort, "GET", "/v1/rules", null, new byte[0], "Host: " + host)
                    .status()).as(host).isEqualTo(200);
        }
        RawResponse view = RawResponse.send(managementPort, "GET", "/actuator/ratelimit", null, new byte[0]);
        assertThat(view.status()).isEqualTo(200);
        assertThat(json.readTree(view.body()).get("killSwitch").asBoolean()).isFalse();
        assertThat(send("GET", "/v1/rules/planted", null, null).statusCode()).isEqualTo(404);
    }

    @Test
    void badWritesAreTheSameProblemsAsOnWebFlux() throws Exception {
        HttpResponse<String> noPrecondition = send("PUT", "/v1/rules/x", "{\"capacity\":1}", null);
        assertThat(noPrecondition.statusCode()).isEqualTo(428);
        assertThat(noPrecondition.headers().firstValue("Content-Type")).hasValue("application/problem+json");

        HttpResponse<String> form = sendTyped("PUT", "/v1/rules/x", "capacity=1", "application/x-www-form-urlencoded");
        assertThat(form.statusCode()).isEqualTo(415);

        HttpResponse<String> invalid = send("PUT", "/v1/rules/x", "{\"capacity\":-5}", "If-None-Match", "*");
        assertThat(invalid.statusCode()).isEqualTo(422);
        JsonNode problem = json.readTree(invalid.body());
        assertThat(problem.get("error").asString()).isEqualTo("invalid_rule");
        assertThat(problem.get("field").asString()).isEqualTo("capacity");
        assertThat(problem.get("instance").asString()).isEqualTo("/v1/rules/x");
        assertThat(invalid.body()).as("byte for byte, as the WebFlux flavour writes it").isEqualTo(
                "{\"type\":\"urn:ratelimit:problem:invalid-rule\",\"title\":\"Invalid rule\",\"status\":422,"
                        + "\"detail\":\"capacity must be at least 1 (the largest burst a client may send), "
                        + "but was -5.\","
                        + "\"instance\":\"/v1/rules/x\",\"error\":\"invalid_rule\",\"field\":\"capacity\"}");

        HttpResponse<String> malformed = send("PUT", "/v1/rules/x", "{\"capacity\":1,\"capacity\":2}", "If-None-Match",
                "*");
        assertThat(malformed.statusCode()).isEqualTo(400);

        HttpResponse<String> huge = send("PUT", "/v1/rules/x", "{\"group\":\"" + "a".repeat(300_000) + "\"}",
                "If-None-Match", "*");
        assertThat(huge.statusCode()).isEqualTo(413);

        assertThat(send("POST", "/v1/rules/x", "{}", null).statusCode()).isEqualTo(405);
        HttpResponse<String> elsewhere = send("GET", "/v1/rules/x/y", null, null);
        assertThat(elsewhere.statusCode()).isEqualTo(404);
        assertThat(elsewhere.body()).isEqualTo("{\"type\":\"urn:ratelimit:problem:not-found\",\"title\":\"Not Found\","
                + "\"status\":404,\"detail\":\"The rules API has no /v1/rules/x/y: rules are at <path>/{ruleId}.\","
                + "\"instance\":\"/v1/rules/x/y\",\"error\":\"not_found\"}");
        HttpResponse<String> openApi = send("GET", "/v1/rules/_openapi.yaml", null, null);
        assertThat(openApi.statusCode()).isEqualTo(200);
        assertThat(openApi.body()).contains("openapi: 3.1", "/v1/rules/{ruleId}");
        assertThat(json.readTree(send("GET", "/v1/rules", null, null).body()).get("rules").size())
                .as("nothing was written").isEqualTo(1);
    }

    @Test
    void aWriteRefusedBeforeItsBodyIsReadLeavesTheConnectionAnsweringOrSaysItCloses() throws Exception {
        List<String> failures = new ArrayList<>();
        for (int size : new int[] { 300 * 1024, 4 * 1024 * 1024 }) {
            byte[] body = new byte[size];
            Arrays.fill(body, (byte) ' ');
            String[][] cases = {
                { "PUT as text", "PUT", "text/plain", "If-Match: *" },
                { "PUT without precondition", "PUT", "application/json", "X-None: 1" },
                { "DELETE with a body", "DELETE", "application/json", "X-None: 1" },
            };
            for (String[] c : cases) {
                String name = c[0] + " of " + size + " bytes";
                try (Socket socket = new Socket()) {
                    socket.connect(new InetSocketAddress("127.0.0.1", managementPort), 2_000);
                    socket.setSoTimeout(10_000);
                    RawResponse first = RawResponse.exchange(socket, RawResponse.request(c[1], "/v1/rules/kept", c[2], body,
                            false, c[3]));
                    if (first.status() < 400 || first.status() >= 500) {
                        failures.add(name + ": " + first.status());
                    }
                    if (first.closes()) {
                        continue; // the server said so: a client does not reuse it
                    }
                    try {
                        RawResponse second = RawResponse.exchange(socket, RawResponse.request("GET", "/v1/rules", null,
                                new byte[0], false, "X-None: 1"));
                        if (second.status() != 200) {
                            failures.add(name + ", then GET: " + second.status());
                        }
                    }
                    catch (IOException ex) {
                        failures.add(name + " (" + first.status() + "), then GET on the same connection: " + ex);
                    }
                }
            }
        }
        assertThat(failures).isEmpty();
        assertThat(json.readTree(send("GET", "/v1/rules", null, null).body()).get("rules").size())
                .as("nothing was written").isEqualTo(1);
    }

    private int gateway(String apiKey) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/x"))
                .header("X-API-Key", apiKey).timeout(Duration.ofSeconds(10)).GET().build();
        return client.send(request, HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    private HttpResponse<String> send(String method, String path, String body, String header, String... value)
            throws Exception {
        HttpRequest.Builder request = builder(method, path, body, "application/json");
        if (header != null) {
            request.header(header, value[0]);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> sendTyped(String method, String path, String body, String type) throws Exception {
        HttpRequest.Builder request = builder(method, path, body, type).header("If-None-Match", "*");
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest.Builder builder(String method, String path, String body, String type) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + path))
                .timeout(Duration.ofSeconds(10));
        if (body != null) {
            request.header("Content-Type", type);
        }
        return request.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body));
    }
}

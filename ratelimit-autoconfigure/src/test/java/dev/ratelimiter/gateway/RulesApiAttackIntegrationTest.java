package dev.ratelimiter.gateway;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.ratelimiter.testsupport.RawResponse;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Attacks on the rules API over raw HTTP/1.1 (nothing normalises what is sent): fuzzed documents, path tricks,
 * preconditions of every shape, refusals on a kept-alive connection. Every answer is a 4xx problem or a success,
 * never a 5xx; nothing refused changes the rules in force; the next request on the same connection is answered.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RulesApiAttackIntegrationTest {

    static final String ADMIN = "Authorization: Basic " + Base64.getEncoder().encodeToString(
            "ratelimit-admin:admin-secret-0123".getBytes(StandardCharsets.UTF_8));
    static final String VIEWER = "Authorization: Basic " + Base64.getEncoder().encodeToString(
            "ratelimit-viewer:viewer-secret-0123".getBytes(StandardCharsets.UTF_8));

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    @Autowired
    ConfigurableApplicationContext context;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("management.server.port", () -> "0");
        registry.add("management.server.address", () -> "127.0.0.1");
        registry.add("management.endpoints.web.exposure.include", () -> "health,ratelimit");
        registry.add("ratelimit.management.security.enabled", () -> "true");
        registry.add("ratelimit.management.security.admin.password", () -> "admin-secret-0123");
        registry.add("ratelimit.management.security.viewer.password", () -> "viewer-secret-0123");
        registry.add("ratelimit.store.type", () -> "redis");
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "50");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "50");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
    }

    static final String RULE = "{\"dimension\": [\"api-key\"], \"match\": {\"routes\": [\"nothing\"]}, "
            + "\"algorithm\": \"token-bucket\", \"capacity\": 5, \"refillTokens\": 1, \"refillPeriod\": \"1h\"}";

    @BeforeEach
    void redis() {
        GatewayInstance.awaitRedis(context);
    }

    @Test
    void fuzzedDocumentsAreRefusedWithA4xxAndChangeNothing() throws IOException {
        RawResponse created = RawResponse.send(managementPort, "PUT", "/v1/rules/fuzzed", "application/json", bytes(RULE), ADMIN,
                "If-None-Match: *");
        assertThat(created.status()).as(created.body()).isEqualTo(200);
        String before = rules();
        List<byte[]> bodies = new ArrayList<>();
        for (String text : List.of("", " ", "null", "[]", "\"rule\"", "1", "{", "}", "{}x", "{\"capacity\": 5}{}",
                "{\"capacity\": 1e999999}", "{\"capacity\": -1e-999999}", "{\"capacity\": NaN}",
                "{\"capacity\": " + "9".repeat(5000) + "}", "{\"capacity\": " + "9".repeat(900) + "}",
                "{\"capacity\": 5, \"capacity\": 6}", "{\"burst\": 5, \"capacity\": 6}",
                "{\"match\": {\"routes\": [\"a\"], \"routeIds\": [\"b\"]}}", "{\"match\": [1]}",
                "{\"match\": {\"tiers\": [null]}}", "{\"match\": {\"tiers\": [[\"x\"]]}}",
                "{\"dimension\": {\"a\": 1}}", "{\"key\": [1]}", "{\"id\": \"other\"}", "{\"id\": 5}",
                "{\"capacity\": \"" + "x".repeat(2000) + "\"}", "{\"capacity\": \"\\u0000\"}",
                "{\"algorithm\": \"\\ud800\"}", "{\"unknown\": 1}", "{\"enabled\": \"maybe\"}",
                "{\"capacity\": true}", "{\"capacity\": 0}", "{\"capacity\": -5}", "{\"capacity\": 5.5}",
                "{\"refillPeriod\": \"P99999999999999999D\"}", "{\"refillPeriod\": \"-1s\"}",
                "{\"dimension\": [\"api-key\"], \"match\": {\"routes\": [\"x\"]}, \"algorithm\": \"token-bucket\", "
                        + "\"capacity\": 9223372036854775807, \"refillTokens\": 9223372036854775807, "
                        + "\"refillPeriod\": \"1ns\"}",
                "{\"" + "a".repeat(100_000) + "\": 1}")) {
            bodies.add(bytes(text));
        }
        bodies.add(bytes("[".repeat(100_000) + "]".repeat(100_000)));
        bodies.add(bytes("{\"a\":".repeat(5_000) + "1" + "}".repeat(5_000)));
        bodies.add(new byte[] { '{', '"', 'a', 'l', 'g', 'o', 'r', 'i', 't', 'h', 'm', '"', ':', '"', (byte) 0xff,
                (byte) 0xfe, '"', '}' });
        bodies.add(new byte[] { (byte) 0xef, (byte) 0xbb, (byte) 0xbf, '{', '}' });
        bodies.add(new byte[] { (byte) 0xfe, (byte) 0xff, 0, '{', 0, '}' });
        bodies.add(new byte[300 * 1024]);
        Map<String, Integer> statuses = new LinkedHashMap<>();
        for (byte[] body : bodies) {
            for (String type : List.of("application/json", "application/json; charset=ISO-8859-1",
                    "application/merge-patch+json")) {
                RawResponse answer = RawResponse.send(managementPort, "PUT", "/v1/rules/fuzzed", type, body, ADMIN, "If-Match: *");
                statuses.put(abbreviated(body) + " as " + type, answer.status());
            }
        }
        for (String type : new String[] { null, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                "application/xml", "garbage", "application/json; charset=\"", "application/json; =", "/", "application/" }) {
            statuses.put(RULE + " as " + type, RawResponse.send(managementPort, "PUT", "/v1/rules/fuzzed", type, bytes(RULE),
                    ADMIN, "If-Match: *").status());
        }
        assertThat(statuses).allSatisfy((sent, status) -> assertThat(status).as(sent).isBetween(200, 499));
        statuses.values().removeIf(status -> status >= 400);
        assertThat(statuses).as("accepted").isEmpty();
        assertThat(rules()).isEqualTo(before);
    }

    @Test
    void onlyTheCurrentStrongTagOrAStarLetsAWriteThrough() throws IOException {
        RawResponse created = RawResponse.send(managementPort, "PUT", "/v1/rules/tagged", "application/json", bytes(RULE), ADMIN,
                "If-None-Match: *");
        assertThat(created.status()).as(created.body()).isEqualTo(200);
        String tag = created.headers().get("etag");
        String version = tag.substring(1, tag.length() - 1);
        String before = rules();
        Map<String, Integer> statuses = new LinkedHashMap<>();
        for (String condition : List.of("If-Match: W/" + tag, "If-Match: W/" + tag + ", \"0\"", "If-Match: " + version,
                "If-Match: '" + version + "'", "If-Match: \"" + version + " \"", "If-Match: \"0" + version + "\"x",
                "If-Match: \"" + (Long.parseLong(version) + 1) + "\"", "If-Match: \"-1\"", "If-Match: \"-2\"",
                "If-Match: \"99999999999999999999\"", "If-Match: \"9223372036854775807\"", "If-Match: ",
                "If-Match: ,,,", "If-Match: \"\"", "If-Match: **", "If-Match: \"*\"",
                "If-None-Match: " + tag, "If-None-Match: *", "If-Match: " + tag.toUpperCase(Locale.ROOT) + "\u0000",
                "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT", "X-If-Match: *")) {
            statuses.put(condition, RawResponse.send(managementPort, "PUT", "/v1/rules/tagged", "application/json",
                    bytes(RULE.replace("5", "6")), ADMIN, condition).status());
            statuses.put("DELETE " + condition, RawResponse.send(managementPort, "DELETE", "/v1/rules/tagged", null, new byte[0],
                    ADMIN, condition).status());
        }
        assertThat(statuses).allSatisfy((sent, status) -> assertThat(status).as(sent).isBetween(400, 499));
        assertThat(rules()).isEqualTo(before);
        RawResponse listed = RawResponse.send(managementPort, "PUT", "/v1/rules/tagged", "application/json",
                bytes(RULE.replace("5", "6")), ADMIN, "If-Match:  \"1\" , " + tag + " ,W/\"3\"");
        assertThat(listed.status()).as(listed.body()).isEqualTo(200);
    }

    @Test
    void pathTricksNeitherBypassTheAuthenticationNorReachTheApiFromThePublicPort() throws IOException {
        String before = rules();
        List<String> paths = List.of("/v1/rules", "/v1/rules/", "//v1/rules", "/v1//rules", "/v1/rules/x",
                "/v1/rules/../rules/x", "/v1/./rules/x", "/x/../v1/rules/x", "/v1/rules%2Fx", "/v1%2Frules/x",
                "/v1/rules;a=b/x", "/v1;a=b/rules/x", "/V1/RULES/x", "/v1/rules/x/", "/v1/rules/x;jsessionid=1",
                "/v1/rules/%2e%2e/rules/x", "/v1/rules/_openapi.yaml", "/v1/rules\\x", "/v1/rules/x?y=../",
                "/%76%31/rules/x", "/actuator/../v1/rules/x", "*", "http://127.0.0.1/v1/rules/x");
        Map<String, Integer> statuses = new LinkedHashMap<>();
        for (String path : paths) {
            for (String method : List.of("GET", "PUT", "DELETE", "POST", "PATCH", "OPTIONS", "HEAD", "TRACE")) {
                RawResponse anonymous = RawResponse.send(managementPort, method, path, "application/json", bytes(RULE),
                        "If-Match: *");
                statuses.put("management " + method + " " + path, anonymous.status());
                RawResponse viewer = RawResponse.send(managementPort, method, path, "application/json", bytes(RULE), VIEWER,
                        "If-Match: *");
                if (!method.equals("GET") && !method.equals("HEAD")) {
                    statuses.put("viewer " + method + " " + path, viewer.status());
                }
                RawResponse pub = RawResponse.send(port, method, path, "application/json", bytes(RULE), ADMIN, "If-Match: *");
                statuses.put("public " + method + " " + path, pub.status() == 200 && pub.body().contains("\"version\"")
                        ? 1 : pub.status());
            }
        }
        statuses.values().removeIf(status -> status >= 400 && status < 500);
        assertThat(statuses).as("answers other than a 4xx").isEmpty();
        assertThat(rules()).isEqualTo(before);
    }

    @Test
    void aRefusedRequestWithABodyLeavesTheConnectionAnswering() throws IOException {
        byte[] large = new byte[300 * 1024];
        java.util.Arrays.fill(large, (byte) ' ');
        // past what a refused request's body is read to: the server stops reading and says it closes
        byte[] huge = new byte[4 * 1024 * 1024];
        java.util.Arrays.fill(huge, (byte) ' ');
        List<String> hung = new ArrayList<>();
        Object[][] cases = {
            { "anonymous PUT", "PUT", "application/json", bytes(RULE), new String[] { "If-Match: *" } },
            { "viewer PUT", "PUT", "application/json", bytes(RULE), new String[] { VIEWER, "If-Match: *" } },
            { "admin PUT without precondition", "PUT", "application/json", bytes(RULE), new String[] { ADMIN } },
            { "admin PUT as text", "PUT", "text/plain", bytes(RULE), new String[] { ADMIN, "If-Match: *" } },
            { "admin PUT too large", "PUT", "application/json", large, new String[] { ADMIN, "If-Match: *" } },
            { "admin POST", "POST", "application/json", bytes(RULE), new String[] { ADMIN } },
            { "admin DELETE with a body", "DELETE", "application/json", large, new String[] { ADMIN } },
            { "admin GET with a body", "GET", "application/json", large, new String[] { ADMIN } },
            { "admin PUT of 4 MB as text", "PUT", "text/plain", huge, new String[] { ADMIN, "If-Match: *" } },
            { "admin DELETE with 4 MB", "DELETE", "application/json", huge, new String[] { ADMIN } },
        };
        for (Object[] c : cases) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", managementPort), 2_000);
                socket.setSoTimeout(10_000);
                RawResponse first;
                try {
                    first = RawResponse.exchange(socket, RawResponse.request((String) c[1], "/v1/rules/kept", (String) c[2], (byte[]) c[3],
                            false, (String[]) c[4]));
                }
                catch (IOException ex) {
                    hung.add(c[0] + ": no first answer (" + ex + ")");
                    continue;
                }
                if (first.status() >= 500) {
                    hung.add(c[0] + ": " + first.status());
                }
                if ("close".equalsIgnoreCase(first.headers().get("connection"))) {
                    continue; // the server said it closes: the client knows not to reuse it
                }
                if (c[3] == huge) {
                    hung.add(c[0] + ": kept the connection after reading 4 MB nobody needed");
                }
                try {
                    RawResponse second = RawResponse.exchange(socket, RawResponse.request("GET", "/v1/rules", null, new byte[0], false, VIEWER));
                    if (second.status() != 200) {
                        hung.add(c[0] + ", then GET: " + second.status());
                    }
                }
                catch (IOException ex) {
                    hung.add(c[0] + " (" + first.status() + "), then GET on the same connection: " + ex);
                }
            }
        }
        assertThat(hung).isEmpty();
    }

    /**
     * An admin's document too large is refused (413) once the bound is read; the rest, sent without end, is not read:
     * the answer says the connection closes. Before, the refusal was taken for a body read whole, and the server read
     * (and threw away) whatever the client went on sending.
     */
    @Test
    void aDocumentTooLargeSentWithoutEndIsNotReadWithoutEnd() throws Exception {
        Endless refused = endless(ADMIN, "If-Match: *");
        assertThat(refused.answer().status()).as(refused.toString()).isEqualTo(413);
        assertThat(refused.stoppedReading()).as(refused.toString()).isTrue();
    }

    /** Refused by the operator security, before any handler: nothing reads the body, and the answer says so. */
    @Test
    void aWriteTheOperatorSecurityRefusesIsNotReadWithoutEnd() throws Exception {
        Endless anonymous = endless("If-Match: *");
        assertThat(anonymous.answer().status()).as(anonymous.toString()).isEqualTo(401);
        assertThat(anonymous.stoppedReading()).as(anonymous.toString()).isTrue();
        Endless viewer = endless(VIEWER, "If-Match: *");
        assertThat(viewer.answer().status()).as(viewer.toString()).isEqualTo(403);
        assertThat(viewer.stoppedReading()).as(viewer.toString()).isTrue();
    }

    /**
     * A write refused before its body is read (no precondition: 428) whose body comes slowly, or not at all: the
     * refusal does not wait for it past a bound, and says the connection closes. Before, it waited for ever.
     */
    @Test
    void aWriteRefusedBeforeItsBodyIsAnsweredThoughTheBodyNeverComes() throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", managementPort), 2_000);
            // generous: the drain gives up after a few seconds
            socket.setSoTimeout(20_000);
            OutputStream out = socket.getOutputStream();
            out.write(bytes("PUT /v1/rules/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + ADMIN + "\r\nContent-Length: 100000\r\n\r\n{\"capacity\""));
            out.flush();
            RawResponse refused = RawResponse.read(socket, false);
            assertThat(refused.status()).as(refused.body()).isEqualTo(428);
            assertThat(refused.closes()).isTrue();
        }
    }

    /** Far past the bound a refused body is read to. */
    static final long SENT_AT_MOST = 48L * 1024 * 1024;
    /** Well above what loopback socket buffers take in while nobody reads. */
    static final long READ_BOUND = 16L * 1024 * 1024;

    /** A refused write's answer, and how much of its endless body the client got to send. */
    record Endless(RawResponse answer, long sent, String problem) {

        boolean stoppedReading() {
            return answer.closes() && sent < READ_BOUND;
        }
    }

    /** A PUT with a chunked body sent without end (up to {@link #SENT_AT_MOST} or 15 s), and its answer. */
    private Endless endless(String... headers) throws Exception {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", managementPort), 2_000);
            socket.setSoTimeout(20_000);
            StringBuilder head = new StringBuilder("PUT /v1/rules/endless HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n");
            for (String header : headers) {
                head.append(header).append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(bytes(head.append("\r\n").toString()));
            AtomicLong sent = new AtomicLong();
            AtomicReference<String> problem = new AtomicReference<>();
            byte[] chunk = new byte[64 * 1024];
            java.util.Arrays.fill(chunk, (byte) ' ');
            byte[] size = bytes(Integer.toHexString(chunk.length) + "\r\n");
            long deadline = System.nanoTime() + 15_000_000_000L;
            Thread writer = new Thread(() -> {
                try {
                    while (sent.get() < SENT_AT_MOST && System.nanoTime() < deadline) {
                        out.write(size);
                        out.write(chunk);
                        out.write(bytes("\r\n"));
                        sent.addAndGet(chunk.length);
                    }
                }
                catch (IOException ex) {
                    problem.set(ex.toString()); // the server closed: what is wanted
                }
            }, "endless-body");
            writer.setDaemon(true);
            writer.start();
            RawResponse answer = RawResponse.read(socket, false);
            writer.join(20_000);
            return new Endless(answer, sent.get(), problem.get());
        }
    }

    private String rules() throws IOException {
        RawResponse answer = RawResponse.send(managementPort, "GET", "/v1/rules", null, new byte[0], VIEWER);
        assertThat(answer.status()).as(answer.body()).isEqualTo(200);
        return answer.body();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String abbreviated(byte[] body) {
        String text = new String(body, StandardCharsets.ISO_8859_1);
        return text.length() > 60 ? text.substring(0, 60) + "...(" + body.length + " bytes)" : text;
    }
}

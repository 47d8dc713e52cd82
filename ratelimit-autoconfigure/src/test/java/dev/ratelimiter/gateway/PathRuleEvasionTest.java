package dev.ratelimiter.gateway;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cap of 3 on {@code /api/hello} through the real gateway: every spelling of that path the gateway still routes to
 * the upstream counts against the cap. Before, the rule matched the raw path and {@code /api//hello} (and the rest)
 * went through uncounted. Requests go as raw bytes, so that no client library tidies the path first.
 */
class PathRuleEvasionTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    static final List<String> SPELLINGS = List.of("/api//hello", "//api/hello", "/api/./hello", "/api/x/../hello",
            "/api/hello/", "/api/hello;v=1", "/api/hell%6F", "/api/hell%6f", "/api%2Fhello", "/api/%2e/hello",
            "/api/x/%2E%2E/hello", "/api/HELLO", "/api/Hello", "/api\\hello", "/api/hello/.", "/api/hello//",
            "/api/hello%2F", "/api/hello?x=1", "/api/x%2F..%2Fhello", "/api/%252e/hello");

    private ConfigurableApplicationContext gateway;
    private int port;

    @BeforeEach
    void start() {
        gateway = fixture.start("ratelimit.store.type=redis",
                "ratelimit.store.timeout=2s", "ratelimit.rules.hello-cap.match.paths=/api/hello",
                "ratelimit.rules.hello-cap.capacity=3", "ratelimit.rules.hello-cap.refill-tokens=1",
                "ratelimit.rules.hello-cap.refill-period=1h", "ratelimit.rules.admin-cap.match.paths=/api/admin/**",
                "ratelimit.rules.admin-cap.key=route", "ratelimit.rules.admin-cap.capacity=2",
                "ratelimit.rules.admin-cap.refill-tokens=1", "ratelimit.rules.admin-cap.refill-period=1h");
        port = Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port"));
    }

    @AfterEach
    void stop() {
        gateway.close();
    }

    @Test
    void noSpellingOfACappedPathGetsPastTheCap() throws IOException {
        for (int i = 0; i < 3; i++) {
            assertThat(get("/api/hello")).isEqualTo(200);
        }
        Map<String, Integer> statuses = new LinkedHashMap<>();
        for (String spelling : SPELLINGS) {
            statuses.put(spelling, get(spelling));
        }
        assertThat(upstream.hits()).as("what reached the upstream: " + statuses).isEqualTo(3);
        List<String> passed = new ArrayList<>();
        statuses.forEach((spelling, status) -> {
            if (status < 400 || status >= 500) {
                passed.add(spelling + " -> " + status);
            }
        });
        assertThat(passed).as("spellings neither refused by the cap nor by the gateway").isEmpty();
        assertThat(statuses.values()).as("the cap refused them (429), not a gateway error").contains(429);
    }

    @Test
    void eachSpellingCountsAgainstTheCapFromTheStart() throws IOException {
        List<Integer> statuses = new ArrayList<>();
        for (String spelling : List.of("/api//hello", "/api/./hello", "/api/x/../hello", "/api/hello;v=1",
                "/api/hell%6F")) {
            statuses.add(get(spelling));
        }
        assertThat(statuses).containsExactly(200, 200, 200, 429, 429);
        assertThat(get("/api/hello")).isEqualTo(429);
        assertThat(get("/api/other")).as("another path is not capped").isEqualTo(200);
    }

    /**
     * A dot or empty segment with {@code ;parameters} is two paths: Tomcat, Jetty and Spring drop the parameters and
     * apply the dot segment ({@code /api/admin/..;/x} is {@code /api/x}), nginx, Go and Express keep {@code ..;} as a
     * name and serve it under {@code /api/admin/}. Counted as either, it would escape the other's cap behind an upstream
     * of the other kind (before, it was {@code /api/x} here and got past the admin cap to nginx's {@code /api/admin/}):
     * refused with 400, nothing reaches the upstream. A parameter on a named segment is one path and counts.
     */
    @Test
    void aPathUpstreamsReadTwoWaysIsRefusedAndReachesNoUpstream() throws IOException {
        assertThat(List.of(get("/api/admin/x"), get("/api/admin/y"), get("/api/admin/x"))).containsExactly(200, 200,
                429);
        Map<String, Integer> statuses = new LinkedHashMap<>();
        for (String spelling : List.of("/api/admin/..;/x", "/api/admin/%2e%2e;x/x", "/api/admin/..%3Bx/x",
                "/api/admin/.;x/../x", "/api/admin/;x/../x", "/api/admin/%252e%252e%253B/x",
                // from the attack review: a dot segment only a second decoding or a backslash makes, which nginx, Go,
                // Express and Tomcat (one decoding, '\\' a name character) serve under /api/admin/
                "/api/admin/%252e%252e/x", "/api/admin/..%5Cx/x", "/api/admin/..%5cx/x", "/api/admin/%2e%2e%5Cx/x",
                "/api/admin/%25%32%65%25%32%65/x")) {
            statuses.put(spelling, get(spelling));
        }
        assertThat(statuses).as("refused as ambiguous").allSatisfy((spelling, status) -> assertThat(status)
                .isEqualTo(400));
        assertThat(get("/api/admin;v=1/x")).as("one path: /api/admin/x, capped").isEqualTo(429);
        assertThat(get("/api/admin/a%5Cb")).as("a backslash without a dot segment: one path, capped").isEqualTo(429);
        assertThat(upstream.hits()).isEqualTo(2);
    }

    private int get(String path) throws IOException {
        return RawHttp.get(port, path, "X-API-Key", "path-tester".getBytes(StandardCharsets.US_ASCII));
    }
}

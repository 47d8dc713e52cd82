package dev.ratelimiter.gateway;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.ratelimiter.testsupport.LoopbackPorts;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.security.crypto.bcrypt.BCryptPasswordEncoder;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operator endpoints on a management port of their own, authenticated as they are wherever that port leaves
 * loopback (forced on here, because tests listen on loopback only): nobody unauthenticated changes a limit or a
 * switch, whatever the path looks like; the viewer reads but never writes; the admin does both, and each change is
 * an audit line naming who made it; the probes and the gateway's traffic need no credentials.
 */
@ExtendWith(OutputCaptureExtension.class)
class OperatorSecurityIntegrationTest {

    static final String ADMIN = "ops-admin";
    static final String ADMIN_PASSWORD = "admin-secret-0123";
    static final String VIEWER_PASSWORD = "viewer-secret-0123";

    /** The viewer's password as a bcrypt hash (cost 4: the reading is tested, not the hash's strength). */
    static final String VIEWER_BCRYPT = "{bcrypt}" + new BCryptPasswordEncoder(4).encode(VIEWER_PASSWORD);

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    static ConfigurableApplicationContext gateway;
    static int managementPort;

    @BeforeAll
    static void start() {
        managementPort = LoopbackPorts.free();
        gateway = GatewayInstance.start(redis.url(), upstream.uri(),
                "management.server.port=" + managementPort, "management.server.address=127.0.0.1",
                "management.endpoints.web.exposure.include=health,ratelimit,ratelimitcontrol,prometheus,env",
                "management.endpoint.env.show-values=always",
                "management.endpoint.health.show-details=when-authorized",
                "ratelimit.management.security.enabled=true",
                "ratelimit.management.security.admin.username=" + ADMIN,
                // Spring's encodings: {noop} for the admin, {bcrypt} for the viewer (plain text, as before, is the
                // other operator tests')
                "ratelimit.management.security.admin.password={noop}" + ADMIN_PASSWORD,
                "ratelimit.management.security.viewer.password=" + VIEWER_BCRYPT,
                "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=3",
                "ratelimit.tiers.free.limits.default.refill-tokens=1",
                "ratelimit.tiers.free.limits.default.refill-period=1h");
        GatewayInstance.awaitRedis(gateway);
    }

    @AfterAll
    static void stop() {
        gateway.close();
        upstream.close();
    }

    @Test
    void nobodyUnauthenticatedOrWithAWrongPasswordFlipsTheKillSwitch() throws IOException {
        String body = "{\"killSwitch\": true}";
        assertThat(RawHttp.send(managementPort, "POST", "/actuator/ratelimitcontrol", body)).isEqualTo(401);
        assertThat(RawHttp.send(managementPort, "POST", "/actuator/ratelimitcontrol", body,
                basic(ADMIN, "wrong-password-0000"))).isEqualTo(401);
        assertThat(RawHttp.send(managementPort, "POST", "/actuator/ratelimitcontrol", body,
                basic("nobody", ADMIN_PASSWORD))).isEqualTo(401);
        assertThat(RawHttp.send(managementPort, "POST", "/actuator/ratelimitcontrol", body,
                basic("ratelimit-viewer", VIEWER_PASSWORD))).isEqualTo(403);

        assertThat(view().get("killSwitch")).isEqualTo(false);
        // and the limit still holds: 3 allowed, the 4th refused
        List<Integer> statuses = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
            statuses.add(RawHttp.get(GatewayInstance.port(gateway), "/api/x", "X-API-Key: kill-switch-probe"));
        }
        assertThat(statuses).containsExactly(200, 200, 200, 429);
    }

    /**
     * A {@code {noop}} and a {@code {bcrypt}} password log in (their encoded forms do not), and an unknown name and a
     * wrong password get the same answer, status, headers and body alike.
     */
    @Test
    void encodedPasswordsLogInAndAnUnknownNameIsAnsweredAsAWrongPassword() throws IOException {
        assertThat(RawHttp.get(managementPort, "/actuator/ratelimit", basic(ADMIN, ADMIN_PASSWORD))).isEqualTo(200);
        assertThat(RawHttp.get(managementPort, "/actuator/ratelimit", basic("ratelimit-viewer", VIEWER_PASSWORD)))
                .isEqualTo(200);
        assertThat(RawHttp.get(managementPort, "/actuator/ratelimit", basic(ADMIN, "{noop}" + ADMIN_PASSWORD)))
                .isEqualTo(401);
        assertThat(RawHttp.get(managementPort, "/actuator/ratelimit", basic("ratelimit-viewer", VIEWER_BCRYPT)))
                .isEqualTo(401);
        EntityExchangeResult<byte[]> unknownName = refused(credentials("nobody", VIEWER_PASSWORD));
        EntityExchangeResult<byte[]> wrongPassword = refused(credentials("ratelimit-viewer", "wrong-secret-0123"));
        assertThat(withoutDate(unknownName.getResponseHeaders()))
                .isEqualTo(withoutDate(wrongPassword.getResponseHeaders()))
                .containsEntry("WWW-Authenticate", List.of("Basic realm=\"Realm\""));
        assertThat(unknownName.getResponseBody()).isEqualTo(wrongPassword.getResponseBody());
    }

    private static EntityExchangeResult<byte[]> refused(String authorization) {
        return management().get().uri("/actuator/ratelimit").header(HttpHeaders.AUTHORIZATION, authorization)
                .exchange().expectStatus().isUnauthorized().expectBody().returnResult();
    }

    private static Map<String, List<String>> withoutDate(HttpHeaders headers) {
        Map<String, List<String>> all = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        headers.forEach(all::put);
        all.remove(HttpHeaders.DATE);
        return all;
    }

    @Test
    void noPathVariantReachesAWriteWithoutCredentials() throws IOException {
        String body = "{\"killSwitch\": true}";
        List<String> paths = List.of("/actuator/ratelimitcontrol/", "//actuator/ratelimitcontrol",
                "/actuator//ratelimitcontrol", "/actuator/ratelimitcontrol;x=1", "/actuator/%72atelimitcontrol",
                "/actuator/ratelimitcontrol%2F", "/ACTUATOR/ratelimitcontrol", "/actuator/./ratelimitcontrol",
                "/actuator/health/../ratelimitcontrol", "/actuator/health/..;/ratelimitcontrol",
                "/actuator/health/%2e%2e/ratelimitcontrol", "/actuator/prometheus/../ratelimitcontrol");
        for (String path : paths) {
            for (String method : List.of("POST", "PUT", "DELETE", "PATCH")) {
                int status = RawHttp.send(managementPort, method, path, body);
                assertThat(status).as(method + " " + path).isIn(400, 401, 404, 405);
            }
        }
        for (String path : List.of("/actuator/ratelimit/free.default", "/actuator/ratelimit//free.default",
                "/actuator/ratelimit/free.default/", "/actuator/health/../ratelimit/free.default")) {
            assertThat(RawHttp.send(managementPort, "POST", path, "{\"capacity\": 1, \"refillTokens\": 1, "
                    + "\"refillPeriod\": \"1d\"}")).as("POST " + path).isIn(400, 401, 404, 405);
            assertThat(RawHttp.send(managementPort, "DELETE", path, "")).as("DELETE " + path)
                    .isIn(400, 401, 404, 405);
        }
        assertThat(view().get("killSwitch")).isEqualTo(false);
        assertThat(((Map<?, ?>) view().get("rules")).get("free.default").toString()).contains("capacity=3");
    }

    @Test
    void theViewerReadsAndTheAnonymousCallerDoesNot() throws IOException {
        assertThat(RawHttp.get(managementPort, "/actuator/ratelimit")).isEqualTo(401);
        assertThat(RawHttp.get(managementPort, "/actuator/ratelimit", basic("ratelimit-viewer", VIEWER_PASSWORD)))
                .isEqualTo(200);
        assertThat(RawHttp.get(managementPort, "/actuator", basic("ratelimit-viewer", VIEWER_PASSWORD)))
                .isEqualTo(200);
        assertThat(RawHttp.get(managementPort, "/actuator")).isEqualTo(401);
    }

    @Test
    void theViewerReadsNothingThatCouldHoldASecretAndNoEndpointShowsThePasswords() throws IOException {
        String viewer = basic("ratelimit-viewer", VIEWER_PASSWORD);
        assertThat(RawHttp.get(managementPort, "/actuator/env", viewer)).isEqualTo(403);
        assertThat(RawHttp.get(managementPort, "/actuator/env/ratelimit.management.security.admin.password",
                viewer)).isEqualTo(403);
        String shown = management().get().uri("/actuator/env/ratelimit.management.security.admin.password")
                .header(HttpHeaders.AUTHORIZATION, credentials(ADMIN, ADMIN_PASSWORD)).exchange()
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        assertThat(shown).contains("******").doesNotContain(ADMIN_PASSWORD);
        String all = management().get().uri("/actuator/env")
                .header(HttpHeaders.AUTHORIZATION, credentials(ADMIN, ADMIN_PASSWORD)).exchange()
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        assertThat(all).doesNotContain(ADMIN_PASSWORD).doesNotContain(VIEWER_PASSWORD);
    }

    @Test
    void noValueFromTheRequestCanForgeAnAuditLine(CapturedOutput output) {
        String forged = "x\n2026-12-01T00:00:00.000Z  INFO 1 --- [main] dev.ratelimiter.audit : operator=\"alice\" "
                + "action=set-kill-switch=true version=1->2 status=200\u2028\u0085";
        for (String body : List.of("{\"tier\": " + json(forged) + ", \"enforce\": true}")) {
            management().post().uri("/actuator/ratelimitcontrol")
                    .header(HttpHeaders.AUTHORIZATION, credentials(ADMIN, ADMIN_PASSWORD))
                    .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange().expectStatus().isBadRequest();
        }
        management().post().uri("/actuator/ratelimit/" + "a%0Aoperator=%22alice%22")
                .header(HttpHeaders.AUTHORIZATION, credentials(ADMIN, ADMIN_PASSWORD))
                .contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("capacity", "1")).exchange()
                .expectStatus().isBadRequest();
        // the forged text stays inside the quoted tier of the admin's own line: no line of its own
        assertThat(output.getOut().lines().filter(line -> line.contains("operator=\"alice\""))).isEmpty();
        assertThat(output.getOut()).contains("operator=\"" + ADMIN + "\" action=set-tier-enforce=true tier=\"x\\u000a2026");
        assertThat(output.getOut()).doesNotContain("\u2028").doesNotContain("\u0085");
    }

    static String json(String text) {
        return dev.ratelimiter.core.JsonText.quote(text);
    }

    @Test
    void theProbesAndTheScrapeNeedNoCredentialsAndHealthDetailsOnlyShowToAnAuthenticatedCaller() {
        Map<String, Object> anonymous = management().get().uri("/actuator/health").exchange()
                .expectStatus().isOk().expectBody(new ParameterizedTypeReference<Map<String, Object>>() { })
                .returnResult().getResponseBody();
        assertThat(anonymous).containsKey("status").doesNotContainKey("components");
        Map<String, Object> viewer = management().get().uri("/actuator/health")
                .header(HttpHeaders.AUTHORIZATION, credentials("ratelimit-viewer", VIEWER_PASSWORD)).exchange()
                .expectStatus().isOk().expectBody(new ParameterizedTypeReference<Map<String, Object>>() { })
                .returnResult().getResponseBody();
        assertThat(viewer).containsKey("components");
        management().get().uri("/actuator/prometheus").exchange().expectStatus().isOk();
    }

    @Test
    void theAdminChangesARuleAndTheSwitchesAndEachChangeIsAnAuditLineNamingTheAdmin(CapturedOutput output) {
        Map<String, Object> put = management().post().uri("/actuator/ratelimit/audited-rule")
                .header(HttpHeaders.AUTHORIZATION, credentials(ADMIN, ADMIN_PASSWORD))
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("capacity", "7", "refillTokens", "7", "refillPeriod", "1m",
                        "matchRouteIds", "nothing-routes-here"))
                .exchange().expectStatus().isOk()
                .expectBody(new ParameterizedTypeReference<Map<String, Object>>() { }).returnResult()
                .getResponseBody();
        long version = ((Number) put.get("version")).longValue();
        assertThat(output.getOut()).containsPattern("operator=\"" + ADMIN + "\" action=put-rule "
                + "rule=\"audited-rule\" version=\\d+->" + version + " status=200");

        management().post().uri("/actuator/ratelimit/audited-rule")
                .header(HttpHeaders.AUTHORIZATION, credentials(ADMIN, ADMIN_PASSWORD))
                .contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("capacity", "-1"))
                .exchange().expectStatus().isBadRequest();
        assertThat(output.getOut()).containsPattern("operator=\"" + ADMIN + "\" action=put-rule "
                + "rule=\"audited-rule\" version=" + version + "->" + version + " status=400 error=invalid_rule");

        management().delete().uri("/actuator/ratelimit/audited-rule")
                .header(HttpHeaders.AUTHORIZATION, credentials(ADMIN, ADMIN_PASSWORD))
                .exchange().expectStatus().isOk();
        assertThat(output.getOut()).containsPattern("operator=\"" + ADMIN + "\" action=delete-rule "
                + "rule=\"audited-rule\" version=" + version + "->" + (version + 1) + " status=200");

        for (boolean on : new boolean[] { true, false }) {
            management().post().uri("/actuator/ratelimitcontrol")
                    .header(HttpHeaders.AUTHORIZATION, credentials(ADMIN, ADMIN_PASSWORD))
                    .contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("killSwitch", on))
                    .exchange().expectStatus().isOk();
            assertThat(view().get("killSwitch")).isEqualTo(on);
            assertThat(output.getOut()).containsPattern("operator=\"" + ADMIN + "\" action=set-kill-switch="
                    + on + " version=\\d+->\\d+ status=200");
        }
    }

    @Test
    void theGatewaysOwnTrafficNeedsNoCredentials() throws IOException {
        assertThat(RawHttp.get(GatewayInstance.port(gateway), "/api/x", "X-API-Key: traffic")).isEqualTo(200);
    }

    static Map<String, Object> view() {
        return management().get().uri("/actuator/ratelimit")
                .header(HttpHeaders.AUTHORIZATION, credentials(ADMIN, ADMIN_PASSWORD)).exchange()
                .expectStatus().isOk().expectBody(new ParameterizedTypeReference<Map<String, Object>>() { })
                .returnResult().getResponseBody();
    }

    static WebTestClient management() {
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + managementPort).build();
    }

    static String basic(String user, String password) {
        return HttpHeaders.AUTHORIZATION + ": " + credentials(user, password);
    }

    static String credentials(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password)
                .getBytes(StandardCharsets.UTF_8));
    }
}

package dev.ratelimiter.helm;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;

import dev.ratelimiter.helm.support.Fleet;
import dev.ratelimiter.helm.support.Helm;
import dev.ratelimiter.helm.support.Node;
import dev.ratelimiter.testsupport.LoopbackPorts;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A pod's application started from what the chart renders - its application.yml, and the passwords of its Secret
 * given as the Deployment gives them (the environment) - on a real server: an unauthenticated write is refused and
 * changes nothing, the Secret's admin password works, the viewer's reads but cannot write, the probes need nothing.
 * Only the addresses differ from a pod: everything listens on loopback here, and Redis is a local server.
 */
class ChartPodAuthenticationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static ConfigurableApplicationContext pod;
    static int management;
    static String adminPassword;
    static String viewerPassword;

    @BeforeAll
    static void start(@TempDir Path config) throws IOException {
        Fleet fleet = new Fleet(Helm.render());
        Map<String, Object> secret = fleet.manifests().get("Secret", Helm.FULLNAME + "-credentials");
        adminPassword = ChartOperatorAccessTest.decode(Node.at(secret, "data.admin-password"));
        viewerPassword = ChartOperatorAccessTest.decode(Node.at(secret, "data.viewer-password"));
        String clientIdSecret = ChartOperatorAccessTest.decode(Node.at(secret, "data.client-id-secret"));
        Path yml = Files.writeString(config.resolve("application.yml"), fleet.applicationYml());
        management = LoopbackPorts.free();
        pod = new SpringApplicationBuilder(Pod.class).run(
                "--spring.config.location=file:" + yml,
                "--server.port=0", "--server.address=127.0.0.1",
                "--management.server.port=" + management, "--management.server.address=127.0.0.1",
                "--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
                // what the Deployment's RATELIMIT_MANAGEMENT_SECURITY_*_PASSWORD variables bind to
                "--ratelimit.management.security.admin.password=" + adminPassword,
                "--ratelimit.management.security.viewer.password=" + viewerPassword,
                "--ratelimit.client-id.secret=" + clientIdSecret);
    }

    @AfterAll
    static void stop() {
        if (pod != null) {
            pod.close();
        }
    }

    @Test
    void anUnauthenticatedWriteIsRefusedAndTheSecretsAdminPasswordWorks() throws Exception {
        String killSwitch = "{\"killSwitch\": true}";
        assertThat(post("/actuator/ratelimitcontrol", killSwitch, null).statusCode()).isEqualTo(401);
        assertThat(post("/actuator/ratelimit/free.default", "{\"capacity\": 1, \"refillTokens\": 1, "
                + "\"refillPeriod\": \"1d\"}", null).statusCode()).isEqualTo(401);
        assertThat(post("/actuator/ratelimitcontrol", killSwitch, "ratelimit-viewer:" + viewerPassword)
                .statusCode()).isEqualTo(403);
        HttpResponse<String> view = get("/actuator/ratelimit", "ratelimit-viewer:" + viewerPassword);
        assertThat(view.statusCode()).isEqualTo(200);
        assertThat(view.body()).contains("\"killSwitch\":false");
        // the viewer reads the rules, never the configuration behind them
        assertThat(get("/actuator/env", "ratelimit-viewer:" + viewerPassword).statusCode()).isIn(403, 404);

        try {
            HttpResponse<String> on = post("/actuator/ratelimitcontrol", killSwitch,
                    "ratelimit-admin:" + adminPassword);
            assertThat(on.statusCode()).as(on.body()).isEqualTo(200);
            assertThat(get("/actuator/ratelimit", "ratelimit-admin:" + adminPassword).body())
                    .contains("\"killSwitch\":true");
        }
        finally {
            post("/actuator/ratelimitcontrol", "{\"killSwitch\": false}", "ratelimit-admin:" + adminPassword);
        }
    }

    @Test
    void theProbesNeedNoCredentials() throws Exception {
        assertThat(get("/actuator/health/readiness", null).statusCode()).isEqualTo(200);
        assertThat(get("/actuator/health/liveness", null).statusCode()).isEqualTo(200);
        HttpResponse<String> health = get("/actuator/health", null);
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).doesNotContain("components");
        assertThat(get("/actuator/health", "ratelimit-admin:" + adminPassword).body()).contains("components");
    }

    static HttpResponse<String> post(String path, String json, String credentials) throws Exception {
        return send(HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofString(json))
                .header("Content-Type", "application/json"), credentials);
    }

    static HttpResponse<String> get(String path, String credentials) throws Exception {
        return send(HttpRequest.newBuilder(uri(path)).GET(), credentials);
    }

    static HttpResponse<String> send(HttpRequest.Builder request, String credentials) throws Exception {
        if (credentials != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
        }
        return CLIENT.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static URI uri(String path) {
        return URI.create("http://127.0.0.1:" + management + path);
    }

    /** The pod's application: the starter's auto-configuration and nothing of the sample's. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Pod {
    }
}

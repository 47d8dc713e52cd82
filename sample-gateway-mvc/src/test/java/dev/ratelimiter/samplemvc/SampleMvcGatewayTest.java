package dev.ratelimiter.samplemvc;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/** The sample as the README runs it, on a real Redis: the demo key's burst of 10, then 429s; the probe unlimited. */
@DirtiesContext
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SampleMvcGatewayTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    ClientIdKeyring clientIds;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) throws IOException {
        registry.add("spring.data.redis.url", redis::url);
        registry.add("management.server.port", () -> "0");
        try (ServerSocket free = new ServerSocket(0)) {
            int upstream = free.getLocalPort();
            registry.add("demo.upstream.port", () -> upstream);
        }
    }

    @Test
    void theDemoKeysBurstOfTenIsAllowedThenItIsRefused() throws Exception {
        // 30 at once refill at most a few tokens (5 a second) while they run: some must be refused.
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            statuses.add(get("/api/hello").statusCode());
        }
        assertThat(statuses.subList(0, 10)).containsOnly(200);
        assertThat(statuses).contains(429).containsOnly(200, 429);
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> probe = get("/status");
            assertThat(probe.statusCode()).isEqualTo(200);
            assertThat(probe.body()).contains("up");
        }
    }

    /** The sample's DEMO ONLY client-id secret is in force (and long enough), so no warning that it is unset. */
    @Test
    void clientIdsAreKeyedByTheDemoSecret() {
        assertThat(clientIds.current().isKeyed()).isTrue();
        assertThat(clientIds.current().scheme()).startsWith("hmac:");
    }

    /**
     * The sample sets no unknown-key policy and no key pattern: the starter's defaults hold. Keys nobody listed share
     * one bucket of 10 per address (before, each was a fresh default-tier client); malformed keys are a 400.
     */
    @Test
    void theStartersDefaultsHoldRotatingKeysToOneBucketAndRefuseMalformedOnes() throws Exception {
        List<HttpResponse<String>> rotating = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            rotating.add(get("/api/hello", "rotating-key-" + i));
        }
        assertThat(rotating.subList(0, 10)).allSatisfy(response -> assertThat(response.statusCode()).isEqualTo(200));
        assertThat(rotating).anySatisfy(response -> {
            assertThat(response.statusCode()).isEqualTo(429);
            assertThat(response.headers().firstValue("RateLimit-Policy")).hasValueSatisfying(
                    policy -> assertThat(policy).startsWith("\"unknown-api-key\""));
        });
        for (String malformed : List.of("a key with spaces", "k".repeat(257), "abc", "{json}")) {
            HttpResponse<String> refused = get("/api/hello", malformed);
            assertThat(refused.statusCode()).as(malformed).isEqualTo(400);
            assertThat(refused.body()).contains("invalid_api_key");
        }
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return get(path, "demo");
    }

    private HttpResponse<String> get(String path, String apiKey) throws IOException, InterruptedException {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).header("X-API-Key", apiKey).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}

package dev.ratelimiter.sample;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/** The sample on a fresh machine: no Redis anywhere, and still a working, limiting gateway. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "management.server.port=0")
@ExtendWith(OutputCaptureExtension.class)
class SampleGatewayWithoutRedisTest {

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void noRedis(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.url", () -> "redis://127.0.0.1:" + closedPort());
    }

    @Test
    void demoKeyGetsItsBurstOfTenThenA429WithRetryAfter(CapturedOutput output) {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(10)).build();
        // The first request of a fresh gateway is slow (class loading); the burst starts after it.
        client.get().uri("/api/hello").header("X-API-Key", "demo-pro").exchange().expectStatus().isOk();
        List<Integer> statuses = new ArrayList<>();
        EntityExchangeResult<String> last = null;
        for (int i = 0; i < 30 && (last == null || last.getStatus().value() != 429); i++) {
            last = client.get().uri("/api/hello").header("X-API-Key", "demo").exchange().expectBody(String.class)
                    .returnResult();
            statuses.add(last.getStatus().value());
        }
        // 5 tokens/s refill while the loop runs may add a few more allowed requests; never fewer than 10.
        assertThat(statuses.subList(0, 10)).containsOnly(200);
        assertThat(last.getStatus().value()).as("a burst of 10 refilled at 5/s: refused well within 30 requests")
                .isEqualTo(429);
        assertThat(last.getResponseHeaders().getFirst("Retry-After")).isEqualTo("1");
        assertThat(last.getResponseBody()).contains("\"error\":\"rate_limited\"");
        assertThat(output).containsOnlyOnce("Redis is not reachable");
        assertThat(output).as("the sample's demo secret: the one warning a new user sees is about Redis")
                .doesNotContain("ratelimit.client-id.secret is not set");
        // Spring Boot's test support warns of a second org.json on the test class path: the test's, not the sample's.
        assertThat(output.getAll().lines().filter(line -> line.contains(" WARN "))
                .filter(line -> !line.contains("DuplicateJsonObjectContextCustomizer")))
                .as("the only warnings at start-up and on the way: Redis's (issue 36: no demo noise)")
                // ours, and Lettuce's own reconnect attempts (also those of another test's gateway in this JVM)
                .allMatch(line -> line.contains("Redis") || line.contains("ConnectionWatchdog"));
    }

    @Test
    void theDemoUpstreamAnswersThroughTheGateway() {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();
        client.get().uri("/api/hello").header("X-API-Key", "demo-pro").exchange()
                .expectStatus().isOk()
                .expectHeader().valueEquals("X-RateLimit-Limit", "100")
                .expectBody(String.class).value(body -> assertThat(body).contains("Hello from the demo upstream"));
    }

    private static int closedPort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
        catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
    }
}

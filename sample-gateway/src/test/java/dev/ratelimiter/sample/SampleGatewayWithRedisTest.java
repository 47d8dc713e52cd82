package dev.ratelimiter.sample;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/** The sample with Redis answering: buckets live in Redis, where every instance would share them. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "management.server.port=0")
class SampleGatewayWithRedisTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.url", redis::url);
        registry.add("ratelimit.store.timeout", () -> "1s");
    }

    @Test
    void bucketsLiveInRedis() {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(10)).build();
        client.get().uri("/api/hello").header("X-API-Key", "demo").exchange()
                .expectStatus().isOk()
                .expectHeader().valueEquals("X-RateLimit-Remaining", "9");
        String bucket = redis.command("KEYS", "rl:*:free.default@t").trim();
        assertThat(bucket).matches("rl:\\{[A-Za-z0-9_-]{22}\\}:free\\.default@t");
        assertThat(redis.command("HGET", bucket, "t")).startsWith("9");
        String quota = redis.command("KEYS", "rl:*:free-hourly@w3600000").trim();
        assertThat(redis.command("HGET", quota, "c")).as("the hourly quota counted the request too").isEqualTo("1");

        // the sample's key format: junk keys are refused before anything is written for them
        client.get().uri("/api/hello").header("X-API-Key", "junk key {" + "x".repeat(200) + "}").exchange()
                .expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error").isEqualTo("invalid_api_key");
        assertThat(redis.command("KEYS", "rl:*:free.default@t").trim().lines()).as("still the demo key's bucket only")
                .hasSize(1);
    }

    /** README "The usage API": the operators' reading on the management port and the client's own on the gateway's. */
    @Test
    void theUsageOfTheDemoKeyIsReadWithoutSpending() {
        WebTestClient gateway = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(10)).build();
        WebTestClient management = WebTestClient.bindToServer().baseUrl("http://localhost:" + managementPort)
                .responseTimeout(Duration.ofSeconds(10)).build();
        // demo-pro, so that the other tests' counts of the demo key's buckets stay theirs
        gateway.get().uri("/api/hello").header("X-API-Key", "demo-pro").exchange().expectStatus().isOk();
        long keys = redis.command("KEYS", "rl:*").trim().lines().count();
        management.get().uri("/v1/usage?apiKey=demo-pro").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.tier").isEqualTo("pro")
                .jsonPath("$.rules[?(@.id == 'pro.default')].limit").isEqualTo(100)
                .jsonPath("$.rules[?(@.id == 'pro.default')].stored").isEqualTo(true)
                .jsonPath("$.skipped[?(@.id == 'reports-in-progress')].reason").exists();
        management.get().uri("/v1/usage?apiKey=demo").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.tier").isEqualTo("free")
                .jsonPath("$.rules[?(@.id == 'free-hourly')].limit").isEqualTo(1000);
        gateway.get().uri("/ratelimit/me").header("X-API-Key", "demo-pro").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.rules[?(@.id == 'pro.default')].stored").isEqualTo(true);
        gateway.get().uri("/ratelimit/me?route=demo-reports").header("X-API-Key", "demo-pro").exchange()
                .expectStatus().isOk().expectBody()
                .jsonPath("$.rules[?(@.id == 'reports-in-progress')].inProgress").isEqualTo(0);
        assertThat(redis.command("KEYS", "rl:*").trim().lines().count()).as("reading made no key").isEqualTo(keys);
    }

    @Test
    void freshKeysThatNoTierListsShareOneSmallBucketPerAddress() {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(10)).build();
        long perKeyBuckets = redis.command("KEYS", "rl:*:free*").trim().lines().count();
        List<Integer> statuses = new java.util.ArrayList<>();
        for (int i = 0; i < 15; i++) {
            statuses.add(client.get().uri("/api/hello").header("X-API-Key", "rotating-" + i).exchange()
                    .returnResult(Void.class).getStatus().value());
        }
        // the sample's budget for unknown keys: a burst of 10 (a token or so may refill while this runs)
        assertThat(statuses.subList(0, 10)).containsOnly(200);
        assertThat(statuses.subList(12, 15)).containsOnly(429);
        assertThat(redis.command("KEYS", "rl:*:unknown-api-key@*").trim().lines()).hasSize(1);
        // and nothing per key: no free-tier bucket, no hourly quota window for any of them
        assertThat(redis.command("KEYS", "rl:*:free*").trim().lines().count()).isEqualTo(perKeyBuckets);
    }

    @Test
    void theSlowReportEndpointAllowsTwoReportsInProgressPerClient() {
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
        List<Integer> statuses = Flux.range(0, 3)
                .flatMap(i -> Mono.delay(Duration.ofMillis(i * 300L)).then(client.get().uri("/reports/run")
                        .header("X-API-Key", "demo-pro")
                        .exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value()))))
                .collectList().block(Duration.ofSeconds(20));
        assertThat(statuses).containsExactlyInAnyOrder(200, 200, 429);
        String permits = redis.command("KEYS", "rl:*:reports-in-progress@c").trim();
        // Given back right after the response is written, which the client may see a moment earlier.
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!"0".equals(redis.command("ZCARD", permits).trim()) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(redis.command("ZCARD", permits).trim()).as("both permits given back").isEqualTo("0");
    }

    /**
     * The LLM-like API's tokens per minute: each answer's usage.total_tokens (15 prompt + 4,000 completion) is
     * charged once it has streamed; the third answer is admitted because 100 tokens were left, drives the bucket into
     * debt, and the next request is refused until the bucket has refilled.
     */
    @Test
    void theLlmRouteChargesTheTokensEachAnswerReports() {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(10)).build();
        String request = "{\"model\":\"demo\",\"max_tokens\":4000,\"stream\":true,\"messages\":[]}";
        List<String> remaining = new java.util.ArrayList<>();
        List<Integer> statuses = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
            EntityExchangeResult<String> answer = client.post().uri("/v1/chat/completions")
                    .header("X-API-Key", "demo-llm").header("Content-Type", "application/json").bodyValue(request)
                    .exchange().expectBody(String.class).returnResult();
            statuses.add(answer.getStatus().value());
            remaining.add(answer.getResponseHeaders().getFirst("X-RateLimit-Remaining"));
            if (answer.getStatus().value() == 200) {
                assertThat(answer.getResponseBody()).contains("\"total_tokens\":4015", "data: [DONE]");
                awaitCharged("llm-tokens@t", 10_000 - 4015L * (i + 1));
            }
        }
        // 10,000 - 100 up front; then 10,000 - 4,015 - 100; then 10,000 - 8,030 - 100; then 1,970 - 4,015 < 100
        assertThat(statuses).containsExactly(200, 200, 200, 429);
        // refilled at 10,000 a minute (167 a second) while the test runs: a little more than these may be left
        assertThat(Long.parseLong(remaining.get(0))).isBetween(9900L, 9900L);
        assertThat(Long.parseLong(remaining.get(1))).isBetween(5885L, 6385L);
        assertThat(Long.parseLong(remaining.get(2))).isBetween(1870L, 2370L);
    }

    /** Waits until the rule's bucket holds no more than {@code tokens} (plus a refill's worth): the charge landed. */
    private static void awaitCharged(String bucketSuffix, long tokens) {
        String bucket = redis.command("KEYS", "rl:*:" + bucketSuffix).trim();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (Double.parseDouble(redis.command("HGET", bucket, "t").trim()) > tokens + 200
                && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(Double.parseDouble(redis.command("HGET", bucket, "t").trim())).isLessThanOrEqualTo(tokens + 200);
    }
}

package dev.ratelimiter.sample;

import java.time.Duration;

import dev.ratelimiter.test.AutoConfigureRateLimiterTest;
import dev.ratelimiter.test.TestBuckets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's limits, tested the way a gateway team would test its own with the kit (ratelimit-test): no Redis, the
 * application's own configuration, and exact counts, because the buckets' clock stands still until the test moves it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "management.server.port=0")
@AutoConfigureRateLimiterTest
class SampleGatewayLimitsTest {

    @LocalServerPort
    int port;

    @Autowired
    TestBuckets buckets;

    WebTestClient client;

    @BeforeEach
    void client() {
        client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(10))
                .build();
    }

    @Test
    void theFreeTierAdmitsItsBurstOfTenThenAnswers429WithTheRateLimitFields() {
        for (int i = 0; i < 10; i++) {
            client.get().uri("/api/hello").header("X-API-Key", "demo").exchange().expectStatus().isOk()
                    .expectHeader().valueEquals("X-RateLimit-Limit", "10")
                    .expectHeader().valueEquals("X-RateLimit-Remaining", String.valueOf(9 - i));
        }
        EntityExchangeResult<String> refused = client.get().uri("/api/hello").header("X-API-Key", "demo").exchange()
                .expectStatus().isEqualTo(429)
                .expectHeader().valueEquals("X-RateLimit-Remaining", "0")
                .expectHeader().valueEquals("Retry-After", "1")
                .expectBody(String.class).returnResult();
        assertThat(refused.getResponseHeaders().getFirst("RateLimit-Policy")).contains("\"free.default\";q=10");
        assertThat(refused.getResponseHeaders().getFirst("RateLimit")).contains("\"free.default\";r=0");
        assertThat(refused.getResponseBody()).contains("\"error\":\"rate_limited\"");
    }

    @Test
    void aSecondOnTheBucketsClockRefillsFiveAndEachTestStartsFull() {
        // full again though the other test may have spent this key's burst: the kit resets before each test
        for (int i = 0; i < 10; i++) {
            client.get().uri("/api/hello").header("X-API-Key", "demo").exchange().expectStatus().isOk();
        }
        client.get().uri("/api/hello").header("X-API-Key", "demo").exchange().expectStatus().isEqualTo(429);
        buckets.advance(Duration.ofSeconds(1));
        for (int i = 0; i < 5; i++) {
            client.get().uri("/api/hello").header("X-API-Key", "demo").exchange().expectStatus().isOk();
        }
        client.get().uri("/api/hello").header("X-API-Key", "demo").exchange().expectStatus().isEqualTo(429);
    }
}

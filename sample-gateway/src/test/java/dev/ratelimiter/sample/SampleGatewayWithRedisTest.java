package dev.ratelimiter.sample;

import java.time.Duration;

import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/** The sample with Redis answering: buckets live in Redis, where every instance would share them. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "management.server.port=0")
class SampleGatewayWithRedisTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @LocalServerPort
    int port;

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
        String bucket = redis.command("KEYS", "rl:*:free.default").trim();
        assertThat(bucket).matches("rl:\\{[A-Za-z0-9_-]{22}\\}:free\\.default");
        assertThat(redis.command("HGET", bucket, "t")).startsWith("9");
        String quota = redis.command("KEYS", "rl:*:free-hourly").trim();
        assertThat(redis.command("HGET", quota, "c")).as("the hourly quota counted the request too").isEqualTo("1");
    }
}

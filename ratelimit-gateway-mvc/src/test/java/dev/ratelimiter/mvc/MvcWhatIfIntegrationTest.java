package dev.ratelimiter.mvc;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;

import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The what-if replay on the MVC flavour: the same operations as on WebFlux, behind the same route below the rules API,
 * reading the events this gateway sent to a real (embedded) Kafka broker.
 */
@DirtiesContext
@SpringBootTest(classes = TestMvcGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcWhatIfIntegrationTest {

    static final String TOPIC = "ratelimit.decisions";

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();
    static final StubUpstream upstream = fixture.upstream();
    static final EmbeddedKafkaKraftBroker kafka = startKafka();

    private static final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    static EmbeddedKafkaKraftBroker startKafka() {
        EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 2, TOPIC);
        broker.afterPropertiesSet();
        // The broker publishes its address as the system property spring.kafka.bootstrap-servers, which every later
        // context of this JVM would read: a test of how the limiter behaves without Kafka would then find one.
        System.clearProperty("spring.kafka.bootstrap-servers");
        return broker;
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.events.kafka.bootstrap-servers", kafka::getBrokersAsString);
        registry.add("management.server.port", () -> "0");
        registry.add("management.server.address", () -> "127.0.0.1");
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "100000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "100000");
    }

    @AfterAll
    static void stop() {
        upstream.close();
        kafka.destroy();
    }

    @Test
    void aProposedRuleReplayedOverTheRecordedEventsRefusesWhatItsBucketCouldNotHold() throws Exception {
        Instant from = Instant.now().minusSeconds(1);
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/api/x")).header("X-API-Key", "mvc-what-if").build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
        }
        Instant to = Instant.now().plusSeconds(1);
        String request = "{\"rule\": {\"key\": [\"api-key\"], \"capacity\": 2, \"refillTokens\": 1, "
                + "\"refillPeriod\": \"1h\"}, \"from\": \"" + from + "\", \"to\": \"" + to + "\"}";
        // the events are sent asynchronously: asked again until all five are on the topic (at most 30 s)
        JsonNode report = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline && (report == null || report.get("events").asLong() < 5)) {
            HttpResponse<String> answer = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + managementPort + "/v1/rules/mvc-proposal/what-if")).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(request)).timeout(Duration.ofSeconds(40)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            report = JsonMapper.builder().build().readTree(answer.body());
            Thread.sleep(200);
        }
        assertThat(report.get("events").asLong()).isEqualTo(5);
        assertThat(report.get("matched").asLong()).isEqualTo(5);
        assertThat(report.get("refused").asLong()).isEqualTo(3);
        JsonNode top = report.get("topRefused").get(0);
        assertThat(top.get("client").asString()).isEqualTo(ClientIds.unkeyed().of("mvc-what-if"));
        assertThat(top.get("refused").asLong()).isEqualTo(3);
    }
}

package dev.ratelimiter.kafka;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.gateway.GatewayFixture;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import dev.ratelimiter.gateway.TestGatewayApplication;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Decision events on a real Kafka broker (the embedded KRaft broker): every decision of a 5,000-request run arrives,
 * with the schema's fields, keyed by client, and never with an API key in clear.
 */
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
// Closed after the class, with its Kafka producer: a cached context would keep calling a broker that is gone.
@DirtiesContext
class DecisionEventsKafkaIntegrationTest {

    static final String TOPIC = "ratelimit.decisions";

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    static final EmbeddedKafkaKraftBroker kafka = startKafka();

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    private final ObjectMapper json = new ObjectMapper();

    static EmbeddedKafkaKraftBroker startKafka() {
        EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 4, TOPIC);
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
        registry.add("ratelimit.events.region", () -> "test-region");
        registry.add("ratelimit.events.instance", () -> "gw-test");
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.default-tier", () -> "free");
        // 80 requests per client per hour: 4,980 requests from 50 clients give 4,000 allowed and 980 denied.
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "80");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
    }

    @AfterAll
    static void stop() {
        upstream.close();
        kafka.destroy();
    }

    @Test
    void everyDecisionOfAFiveThousandRequestRunArrivesOnTheTopicWithTheSchemasFields() {
        Instant start = Instant.now();
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
        Map<Integer, AtomicLong> statuses = new ConcurrentHashMap<>();
        // One client one request after another: its events must arrive in that order.
        for (int i = 0; i < 20; i++) {
            client.get().uri("/api/x").header("X-API-Key", "sequential").retrieve().toBodilessEntity()
                    .block(Duration.ofSeconds(10));
        }
        Flux.range(0, 4_980)
                .flatMap(i -> client.get().uri("/api/x").header("X-API-Key", "client-" + (i % 50))
                        .exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value())),
                        32)
                .doOnNext(status -> statuses.computeIfAbsent(status, s -> new AtomicLong()).incrementAndGet())
                .blockLast(Duration.ofMinutes(2));
        assertThat(statuses.get(200).get()).isEqualTo(4_000);
        assertThat(statuses.get(429).get()).isEqualTo(980);

        List<ConsumerRecord<String, String>> records;
        try (TopicReader reader = new TopicReader(kafka.getBrokersAsString(), TOPIC)) {
            records = reader.readUntil(read -> read.size() >= 5_000, Duration.ofSeconds(60));
        }
        assertThat(records.size()).as("events on the topic for 5,000 decisions").isGreaterThanOrEqualTo(4_995)
                .isLessThanOrEqualTo(5_000);

        Map<String, Long> verdicts = new HashMap<>();
        Map<String, Instant> lastTimeByClient = new HashMap<>();
        List<Long> sequentialRemaining = new java.util.ArrayList<>();
        for (ConsumerRecord<String, String> record : records) {
            assertThat(record.value()).doesNotContain("client-");
            JsonNode event = json.readTree(record.value());
            assertThat(event.get("schema").asInt()).isEqualTo(1);
            String clientId = event.get("client").asString();
            assertThat(record.key()).as("keyed by client").isEqualTo(clientId);
            Instant time = Instant.parse(event.get("time").asString());
            assertThat(time).isAfterOrEqualTo(start.minusSeconds(1));
            assertThat(record.timestamp()).isEqualTo(time.toEpochMilli());
            lastTimeByClient.put(clientId, time);
            if (clientId.equals(ClientIds.unkeyed().of("sequential"))) {
                sequentialRemaining.add(event.get("remaining").asLong());
            }
            assertThat(event.get("tier").asString()).isEqualTo("free");
            assertThat(event.get("route").asString()).isEqualTo("api");
            assertThat(event.get("routeClass").asString()).isEqualTo("default");
            assertThat(event.get("rule").asString()).isEqualTo("free.default");
            assertThat(event.get("limit").asLong()).isEqualTo(80);
            // Allowed requests are decided in Redis; a client's denials after the first come from the denial cache.
            assertThat(event.get("source").asString()).isIn("store", "local");
            if ("allowed".equals(event.get("verdict").asString())) {
                assertThat(event.get("source").asString()).isEqualTo("store");
            }
            assertThat(event.get("instance").asString()).isEqualTo("gw-test");
            assertThat(event.get("region").asString()).isEqualTo("test-region");
            assertThat(event.get("rules").get(0).get("id").asString()).isEqualTo("free.default");
            verdicts.merge(event.get("verdict").asString(), 1L, Long::sum);
        }
        assertThat(lastTimeByClient).hasSize(51).containsKey(ClientIds.unkeyed().of("client-7"));
        assertThat(sequentialRemaining).as("one client's events, in the order of its requests")
                .containsExactly(java.util.stream.LongStream.rangeClosed(60, 79).map(r -> 139 - r).boxed()
                        .toArray(Long[]::new));
        assertThat(verdicts.getOrDefault("denied", 0L)).isBetween(975L, 980L);
        assertThat(verdicts.getOrDefault("allowed", 0L)).isBetween(4_015L, 4_020L);
        assertThat(meters.get("ratelimit.events").tag("result", "dropped").functionCounter().count()).isZero();
        assertThat(meters.get("ratelimit.events").tag("result", "sent").functionCounter().count())
                .isEqualTo(records.size());
    }
}

package dev.ratelimiter.kafka;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.gateway.TestGatewayApplication;
import dev.ratelimiter.gateway.GatewayFixture;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import kafka.server.BrokerServer;
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
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka stopped in the middle of a run: requests keep their status codes and their latency, the events that cannot
 * be delivered are counted, and when the broker is started again events flow again. The embedded KRaft broker's
 * own server is shut down and started again in place, on the same address.
 */
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
// Closed after the class, with its Kafka producer: a cached context would keep calling a broker that is gone.
@DirtiesContext
class DecisionEventsKafkaOutageTest {

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
        // Give up on undeliverable events within seconds rather than the default 30 s, so the test sees them counted.
        registry.add("ratelimit.events.kafka.producer.delivery.timeout.ms", () -> "3000");
        registry.add("ratelimit.events.kafka.producer.request.timeout.ms", () -> "1000");
        registry.add("ratelimit.events.kafka.producer.linger.ms", () -> "5");
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "10");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1h");
    }

    @AfterAll
    static void stop() {
        upstream.close();
        kafka.destroy();
    }

    @Test
    void withKafkaGoneRequestsAreServedAsBeforeAndEventsFlowAgainWhenItReturns() {
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
        Run healthy = run(client, "up", 1_000);
        long sentBy = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (sent() < 1_000 && System.nanoTime() < sentBy) {
            sleep(50);
        }
        assertThat(sent()).as("events delivered while Kafka was up").isEqualTo(1_000);
        double undeliveredBefore = undelivered();

        BrokerServer server = kafka.getCluster().brokers().values().iterator().next();
        server.shutdown();
        server.awaitShutdown();
        Run outage = run(client, "down", 1_000);
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (undelivered() - undeliveredBefore < 100 && System.nanoTime() < deadline) {
            sleep(100);
        }

        System.out.printf("Kafka outage: median %.2f ms healthy, %.2f ms with Kafka gone; statuses %s / %s; "
                + "%.0f events undelivered, counted%n", healthy.median(), outage.median(), healthy.statuses,
                outage.statuses, undelivered() - undeliveredBefore);
        assertThat(outage.statuses).as("the same status codes with Kafka gone").isEqualTo(healthy.statuses);
        assertThat(outage.median()).as("median latency with Kafka gone (healthy: %.2f ms)", healthy.median())
                .isLessThanOrEqualTo(healthy.median() * 1.5 + 3);
        assertThat(undelivered() - undeliveredBefore).as("events that could not be delivered, counted")
                .isGreaterThanOrEqualTo(100);

        Instant restarted = Instant.now();
        // Blocks until the controller has let the broker register again (its old session must expire first).
        server.startup();
        List<ConsumerRecord<String, String>> after;
        try (TopicReader reader = new TopicReader(kafka.getBrokersAsString(), TOPIC)) {
            after = reader.readUntil(records -> {
                client.get().uri("/api/x").header("X-API-Key", "returning").retrieve().toBodilessEntity()
                        .onErrorResume(failure -> Mono.empty()).block(Duration.ofSeconds(5));
                return records.stream().filter(record -> record.timestamp() >= restarted.toEpochMilli()).count() >= 20;
            }, Duration.ofSeconds(60));
        }
        List<ConsumerRecord<String, String>> returning = after.stream()
                .filter(record -> record.timestamp() >= restarted.toEpochMilli()).toList();
        assertThat(returning).as("events of requests made after the broker came back").hasSizeGreaterThanOrEqualTo(20);
    }

    private double sent() {
        return meters.get("ratelimit.events").tag("result", "sent").functionCounter().count();
    }

    private double undelivered() {
        return meters.get("ratelimit.events").tag("result", "failed").functionCounter().count()
                + meters.get("ratelimit.events").tag("result", "dropped").functionCounter().count();
    }

    /** 1,000 requests from 50 clients, 8 at a time: statuses and latencies. */
    private static Run run(WebClient client, String prefix, int requests) {
        Map<Integer, AtomicLong> statuses = new ConcurrentHashMap<>();
        List<Double> millis = Collections.synchronizedList(new ArrayList<>());
        Flux.range(0, requests).flatMap(i -> Mono.defer(() -> {
            long start = System.nanoTime();
            return client.get().uri("/api/x").header("X-API-Key", prefix + "-" + (i % 50))
                    .exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value()))
                    .doOnNext(status -> millis.add((System.nanoTime() - start) / 1e6));
        }), 8).doOnNext(status -> statuses.computeIfAbsent(status, s -> new AtomicLong()).incrementAndGet())
                .blockLast(Duration.ofMinutes(2));
        Map<Integer, Long> counts = new java.util.TreeMap<>();
        statuses.forEach((status, count) -> counts.put(status, count.get()));
        return new Run(counts, millis);
    }

    private record Run(Map<Integer, Long> statuses, List<Double> millis) {

        double median() {
            List<Double> sorted = new ArrayList<>(millis);
            Collections.sort(sorted);
            return sorted.get(sorted.size() / 2);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}

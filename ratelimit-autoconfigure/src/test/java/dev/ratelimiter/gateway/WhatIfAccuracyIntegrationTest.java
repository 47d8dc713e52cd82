package dev.ratelimiter.gateway;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;

import dev.ratelimiter.kafka.DecisionEventRange;
import dev.ratelimiter.testsupport.StubUpstream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The what-if replay against shadow mode on the same traffic: a real gateway, Redis and Kafka broker, the proposed
 * rule deployed in shadow beside an enforced tier rule, seeded random bursts from several clients; then the recorded
 * events replayed through {@code POST /v1/rules/{id}/what-if} against the same rule. Per client and hour, the
 * replay of the admitted traffic refuses what shadow mode recorded as shadow denials, within the timing difference
 * between Redis's clock (the script refills by {@code TIME}) and the events' timestamps (taken by the gateway after
 * the script answered): each decision taken within that difference of a token's refill can go either way. Measured:
 * no difference for the rule refilled 2 a second (about 260 shadow denials), 1 of 40 for the one refilled 10 a second.
 */
@DirtiesContext
// the accuracy run first: it reads the whole topic as shadow mode's record, which the other runs' traffic would join
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class WhatIfAccuracyIntegrationTest {

    static final String TOPIC = "ratelimit.decisions";
    static final String RULE = "whatif-proposed";
    static final String ADMIN = "ratelimit-admin";
    static final String ADMIN_PASSWORD = "admin-secret-0123";
    static final String VIEWER = "ratelimit-viewer";
    static final String VIEWER_PASSWORD = "viewer-secret-0123";
    static final String PROPOSED = "{\"dimension\": [\"api-key\"], \"match\": {\"routes\": [\"api\"]}, "
            + "\"algorithm\": \"token-bucket\", \"capacity\": 4, \"refillTokens\": 2, \"refillPeriod\": \"1s\"}";
    /** A second proposal refilled ten times a second: the clocks' difference matters more to it. */
    static final String FAST_RULE = "whatif-fast";
    static final String FAST = "{\"dimension\": [\"api-key\"], \"match\": {\"routes\": [\"api\"]}, "
            + "\"algorithm\": \"token-bucket\", \"capacity\": 3, \"refillTokens\": 10, \"refillPeriod\": \"1s\"}";

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final StubUpstream upstream = fixture.upstream();
    static final EmbeddedKafkaKraftBroker kafka = startKafka();

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    @Autowired
    ConfigurableApplicationContext context;

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
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.events.kafka.bootstrap-servers", kafka::getBrokersAsString);
        registry.add("ratelimit.events.region", () -> "test-region");
        registry.add("management.server.port", () -> "0");
        registry.add("management.server.address", () -> "127.0.0.1");
        registry.add("ratelimit.management.security.enabled", () -> "true");
        registry.add("ratelimit.management.security.admin.password", () -> ADMIN_PASSWORD);
        registry.add("ratelimit.management.security.viewer.password", () -> VIEWER_PASSWORD);
        registry.add("ratelimit.default-tier", () -> "free");
        // enforced: a burst of 20, then 5 a second - only the heaviest clients' bursts are refused
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "20");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "5");
        registry.add("ratelimit.tiers.free.limits.default.refill-period", () -> "1s");
        // the proposed rule, in shadow: what it would refuse is recorded, never enforced
        registry.add("ratelimit.rules." + RULE + ".key[0]", () -> "api-key");
        registry.add("ratelimit.rules." + RULE + ".match.route-ids[0]", () -> "api");
        registry.add("ratelimit.rules." + RULE + ".capacity", () -> "4");
        registry.add("ratelimit.rules." + RULE + ".refill-tokens", () -> "2");
        registry.add("ratelimit.rules." + RULE + ".refill-period", () -> "1s");
        registry.add("ratelimit.rules." + RULE + ".mode", () -> "shadow");
        registry.add("ratelimit.rules." + FAST_RULE + ".key[0]", () -> "api-key");
        registry.add("ratelimit.rules." + FAST_RULE + ".match.route-ids[0]", () -> "api");
        registry.add("ratelimit.rules." + FAST_RULE + ".capacity", () -> "3");
        registry.add("ratelimit.rules." + FAST_RULE + ".refill-tokens", () -> "10");
        registry.add("ratelimit.rules." + FAST_RULE + ".refill-period", () -> "1s");
        registry.add("ratelimit.rules." + FAST_RULE + ".mode", () -> "shadow");
    }

    @AfterAll
    static void stop() {
        upstream.close();
        kafka.destroy();
    }

    @BeforeEach
    void connected() {
        GatewayInstance.awaitRedis(context);
    }

    /** A client's request, sent as part of a burst. */
    record Burst(String apiKey, int requests) {
    }

    @Test
    @Order(1)
    void theReplayOfTheAdmittedTrafficRefusesWhatShadowModeRecordedPerClientAndHour() throws InterruptedException {
        Instant from = Instant.now().minusSeconds(1);
        int sent = playRandomBursts(new Random(35), 60);
        Instant to = Instant.now().plusSeconds(1);
        List<JsonNode> events = recordedEvents(sent);
        long enforcedDenials = events.stream().map(event -> event.get("verdict").asString())
                .filter(verdict -> !verdict.equals("allowed") && !verdict.equals("shadow_denied")).count();
        assertThat(enforcedDenials).as("the enforced rule refused some of the traffic").isPositive();
        compare(RULE, PROPOSED, events, enforcedDenials, from, to);
        compare(FAST_RULE, FAST, events, enforcedDenials, from, to);
    }

    /** The replay of {@code rule} against shadow mode's record of it, per client and hour. */
    private void compare(String rule, String document, List<JsonNode> events, long enforcedDenials, Instant from,
            Instant to) {
        // shadow mode's verdicts, per client and hour, of the requests the enforced rule let through
        Map<String, long[]> shadow = new HashMap<>();
        for (JsonNode event : events) {
            String verdict = event.get("verdict").asString();
            if (!verdict.equals("allowed") && !verdict.equals("shadow_denied")) {
                continue;
            }
            boolean shadowDenied = false;
            for (JsonNode result : event.get("rules")) {
                shadowDenied |= result.get("id").asString().equals(rule) && !result.get("allowed").asBoolean();
            }
            long[] counts = shadow.computeIfAbsent(clientHour(event.get("client").asString(),
                    Instant.parse(event.get("time").asString())), key -> new long[2]);
            counts[0]++;
            counts[1] += shadowDenied ? 1 : 0;
        }
        JsonNode admitted = whatIf(rule, document, from, to, "admitted");
        assertThat(admitted.get("events").asLong()).isEqualTo(events.size());
        assertThat(admitted.get("refusedInForce").asLong()).isEqualTo(enforcedDenials);
        assertThat(admitted.get("unjudged").size()).isZero();
        Map<String, long[]> replayed = new HashMap<>();
        for (JsonNode row : admitted.get("clientHours")) {
            replayed.put(clientHour(row.get("client").asString(), Instant.parse(row.get("hourStart").asString())),
                    new long[] { row.get("requests").asLong(), row.get("refused").asLong() });
        }
        assertThat(replayed.keySet()).isEqualTo(shadow.keySet());
        long shadowTotal = 0;
        long differenceTotal = 0;
        List<String> lines = new ArrayList<>();
        for (String key : new TreeSet<>(shadow.keySet())) {
            long[] expected = shadow.get(key);
            long[] actual = replayed.get(key);
            assertThat(actual[0]).as("requests of %s", key).isEqualTo(expected[0]);
            long difference = Math.abs(actual[1] - expected[1]);
            shadowTotal += expected[1];
            differenceTotal += difference;
            lines.add(key + " requests=" + expected[0] + " shadow=" + expected[1] + " replay=" + actual[1]);
            // a client's refusals: within 10 % of shadow mode's, or 2 for a client refused only a few times
            assertThat(difference).as("%s", lines).isLessThanOrEqualTo(Math.max(2, expected[1] / 10));
        }
        JsonNode arrivals = whatIf(rule, document, from, to, "arrivals");
        double percent = shadowTotal == 0 ? 0 : 100.0 * differenceTotal / shadowTotal;
        System.out.printf("what-if accuracy of %s: %d shadow denials, replay (admitted) %d, |difference| summed per "
                + "client-hour %d (%.2f %%); replay of every arrival refuses %d of %d%n%s%n", rule, shadowTotal,
                admitted.get("refused").asLong(), differenceTotal, percent, arrivals.get("refused").asLong(),
                arrivals.get("matched").asLong(), String.join("\n", lines));
        assertThat(shadowTotal).as("the proposed rule would refuse some of the traffic").isPositive();
        assertThat(differenceTotal).as("summed over every client and hour: within 5 %% (+2)")
                .isLessThanOrEqualTo(2 + shadowTotal / 20);
        // every arrival charges the proposed bucket, refused or not: at least as many refusals
        assertThat(arrivals.get("refused").asLong()).isGreaterThanOrEqualTo(admitted.get("refused").asLong());
        assertThat(arrivals.get("matched").asLong()).isEqualTo(events.size());
    }

    @Test
    void aViewerMayNotRunAReplayAndBadRequestsAreProblemsThatNameTheirField() {
        Instant to = Instant.now();
        String range = "\"from\": \"" + to.minusSeconds(60) + "\", \"to\": \"" + to + "\"";
        assertThat(post(VIEWER, VIEWER_PASSWORD, "{\"rule\": " + PROPOSED + ", " + range + "}").status())
                .isEqualTo(403);
        assertThat(post(null, null, "{\"rule\": " + PROPOSED + ", " + range + "}").status()).isEqualTo(401);
        Answer notJson = post(ADMIN, ADMIN_PASSWORD, "{\"rule\": ");
        assertThat(notJson.status()).isEqualTo(400);
        assertThat(notJson.json().get("error").asString()).isEqualTo("malformed_document");
        Answer invalid = post(ADMIN, ADMIN_PASSWORD, "{\"rule\": " + PROPOSED.replace("\"capacity\": 4",
                "\"capacity\": -4") + ", " + range + "}");
        assertThat(invalid.status()).as(invalid.body()).isEqualTo(422);
        assertThat(invalid.json().get("field").asString()).isEqualTo("rule.capacity");
        Answer noRule = post(ADMIN, ADMIN_PASSWORD, "{" + range + "}");
        assertThat(noRule.status()).isEqualTo(400);
        assertThat(noRule.json().get("field").asString()).isEqualTo("rule");
        Answer tooLong = post(ADMIN, ADMIN_PASSWORD, "{\"rule\": " + PROPOSED + ", \"from\": \""
                + to.minus(Duration.ofDays(8)) + "\", \"to\": \"" + to + "\"}");
        assertThat(tooLong.status()).isEqualTo(400);
        assertThat(tooLong.json().get("error").asString()).isEqualTo("range_too_large");
        assertThat(tooLong.json().get("detail").asString()).contains("at most PT168H");
        Answer backwards = post(ADMIN, ADMIN_PASSWORD, "{\"rule\": " + PROPOSED + ", \"from\": \"" + to
                + "\", \"to\": \"" + to.minusSeconds(1) + "\"}");
        assertThat(backwards.status()).isEqualTo(400);
        assertThat(backwards.json().get("field").asString()).isEqualTo("to");
        Answer notAnInstant = post(ADMIN, ADMIN_PASSWORD, "{\"rule\": " + PROPOSED + ", \"from\": \"yesterday\", "
                + "\"to\": \"" + to + "\"}");
        assertThat(notAnInstant.status()).isEqualTo(400);
        assertThat(notAnInstant.json().get("field").asString()).isEqualTo("from");
        Answer concurrency = post(ADMIN, ADMIN_PASSWORD, "{\"rule\": {\"dimension\": [\"api-key\"], "
                + "\"algorithm\": \"concurrency\", \"maxInProgress\": 3}, " + range + "}");
        assertThat(concurrency.status()).as(concurrency.body()).isEqualTo(422);
        assertThat(concurrency.json().get("detail").asString()).contains("in progress");
        Answer traffic = post(ADMIN, ADMIN_PASSWORD, "{\"rule\": " + PROPOSED + ", " + range
                + ", \"traffic\": \"some\"}");
        assertThat(traffic.status()).isEqualTo(400);
        assertThat(traffic.json().get("field").asString()).isEqualTo("traffic");
    }

    @Test
    void aRangeHoldingMoreEventsThanAllowedIsRefusedBeforeAnyIsRead() throws InterruptedException {
        Instant from = Instant.now().minusSeconds(1);
        playRandomBursts(new Random(7), 3);
        DecisionEventRange range = new DecisionEventRange(kafka.getBrokersAsString(), TOPIC, Map.of());
        Instant to = Instant.now().plusSeconds(1);
        assertThatThrownBy(() -> range.read(from, to, 1, Duration.ofSeconds(20)))
                .isInstanceOf(DecisionEventRange.TooMany.class).hasMessageContaining("at most 1");
    }

    @Test
    void recordsThatAreNoEventAreCountedAndFieldsNotKnownAreIgnored() throws Exception {
        // timestamps of 2020: a range no other run's traffic falls in
        Instant at = Instant.parse("2020-01-01T00:00:00Z");
        String event = "{\"schema\":1,\"time\":\"%s\",\"client\":\"c1\",\"tier\":\"free\",\"route\":\"api\","
                + "\"verdict\":\"allowed\",\"reason\":\"evaluated\",\"rules\":[],\"path\":\"/later\","
                + "\"cost\":3,\"nested\":{\"a\":[1]}}";
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.getBrokersAsString(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
            List<String> values = List.of(event.formatted(at.plusSeconds(1)), "not json", "{\"schema\":2,\"time\":\""
                    + at.plusSeconds(2) + "\",\"verdict\":\"allowed\"}", "[1,2]",
                    event.formatted(at.plusSeconds(90)));
            for (int i = 0; i < values.size(); i++) {
                long timestamp = at.plusSeconds(i == values.size() - 1 ? 90 : i + 1).toEpochMilli();
                producer.send(new ProducerRecord<>(TOPIC, 0, timestamp, "c1", values.get(i))).get();
            }
        }
        DecisionEventRange.Read read = new DecisionEventRange(kafka.getBrokersAsString(), TOPIC, Map.of())
                .read(at, at.plusSeconds(60), 100, Duration.ofSeconds(20));
        assertThat(read.malformed()).isEqualTo(3);
        assertThat(read.events()).hasSize(1);
        assertThat(read.events().get(0).client()).isEqualTo("c1");
        assertThat(read.events().get(0).route()).isEqualTo("api");
        assertThat(read.events().get(0).time()).isEqualTo(at.plusSeconds(1));
    }

    @Test
    void kafkaThatDoesNotAnswerIsUnavailableWithinTheDeadline() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        DecisionEventRange range = new DecisionEventRange("127.0.0.1:" + closedPort, TOPIC, Map.of());
        Instant to = Instant.now();
        assertThatThrownBy(() -> range.read(to.minusSeconds(60), to, 1_000, Duration.ofSeconds(2)))
                .isInstanceOf(DecisionEventRange.Unavailable.class).hasMessageContaining("did not answer within PT2S");
    }

    record Answer(int status, String body) {

        JsonNode json() {
            return JsonMapper.builder().build().readTree(body);
        }
    }

    private Answer post(String user, String password, String body) {
        return WebClient.builder().baseUrl("http://127.0.0.1:" + managementPort).build().post()
                .uri("/v1/rules/" + RULE + "/what-if").headers(headers -> {
                    if (user != null) {
                        headers.setBasicAuth(user, password);
                    }
                })
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchangeToMono(response -> response.bodyToMono(String.class).defaultIfEmpty("")
                        .map(text -> new Answer(response.statusCode().value(), text)))
                .block(Duration.ofSeconds(30));
    }

    /** Rounds of bursts from 6 clients, each a random size (0 to 7), with random pauses; the requests sent. */
    private int playRandomBursts(Random random, int rounds) throws InterruptedException {
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
        int sent = 0;
        for (int round = 0; round < rounds; round++) {
            List<Burst> bursts = new ArrayList<>();
            for (int c = 0; c < 6; c++) {
                // client c is heavier the larger c: up to 7 requests a round
                int size = random.nextInt(c + 2);
                if (size > 0) {
                    bursts.add(new Burst("whatif-client-" + c, size));
                    sent += size;
                }
            }
            Flux.fromIterable(bursts)
                    .flatMap(burst -> Flux.range(0, burst.requests()).concatMap(i -> client.get().uri("/api/x")
                            .header("X-API-Key", burst.apiKey()).exchangeToMono(response -> response.releaseBody()
                                    .thenReturn(response.statusCode().value()))))
                    .blockLast(Duration.ofSeconds(30));
            Thread.sleep(random.nextInt(400));
        }
        return sent;
    }

    private List<JsonNode> recordedEvents(int expected) {
        JsonMapper json = JsonMapper.builder().build();
        List<JsonNode> events = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.getBrokersAsString(),
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false))) {
            List<TopicPartition> partitions = consumer.partitionsFor(TOPIC, Duration.ofSeconds(10)).stream()
                    .map(info -> new TopicPartition(TOPIC, info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (events.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    events.add(json.readTree(record.value()));
                }
            }
        }
        assertThat(events).as("every decision on the topic").hasSize(expected);
        return events;
    }

    private JsonNode whatIf(String rule, String document, Instant from, Instant to, String traffic) {
        String body = "{\"rule\": " + document + ", \"from\": \"" + from + "\", \"to\": \"" + to
                + "\", \"traffic\": \"" + traffic + "\"}";
        String answer = WebClient.builder().baseUrl("http://127.0.0.1:" + managementPort).build().post()
                .uri("/v1/rules/" + rule + "/what-if").headers(headers -> headers.setBasicAuth(ADMIN,
                        ADMIN_PASSWORD))
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).retrieve().bodyToMono(String.class)
                .block(Duration.ofSeconds(60));
        return JsonMapper.builder().build().readTree(answer);
    }

    private static String clientHour(String client, Instant time) {
        return client + "@" + time.truncatedTo(ChronoUnit.HOURS);
    }
}

package dev.ratelimiter.rollup.gateway;

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
import java.util.Properties;
import java.util.function.BooleanSupplier;

import dev.ratelimiter.core.AbuseScores;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.kafka.AbuseScoreListener;
import dev.ratelimiter.rollup.AbuseScoring;
import dev.ratelimiter.rollup.RollupSettings;
import dev.ratelimiter.rollup.RollupTopology;
import dev.ratelimiter.testsupport.RedisServer;
import dev.ratelimiter.testsupport.RedisServers;
import dev.ratelimiter.testsupport.StubUpstream;
import kafka.server.BrokerServer;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Limits that follow an abuse score, end to end: a gateway on a real Redis sends its decision events to an embedded
 * KRaft broker, the rollup (real Kafka Streams) scores each client's conduct per 2 s window and publishes the scores to
 * the compacted topic, and the gateway reads them back and lowers the scored client's limits; the lowering halves
 * every 4 s (half-life), so the limit comes back. Every client is of the same tier: a token bucket of 20 refilled 20
 * per 2 s, per API key. Operators push scores through the rules API and through the topic too; a malformed record on
 * the topic changes nothing and holds up nothing.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AbuseScoresEndToEndTest {

    static final String DECISIONS = "ratelimit.decisions";
    static final String ROLLUP = "ratelimit.usage-rollup";
    static final String SCORES = "ratelimit.abuse-scores";
    static final String ADMIN_PASSWORD = "admin-secret-0123";
    static final Duration WAIT = Duration.ofSeconds(90);

    static EmbeddedKafkaKraftBroker kafka;
    static RedisServer redis;
    static StubUpstream upstream;
    static KafkaStreams rollup;
    static ConfigurableApplicationContext gateway;
    static int port;
    static int managementPort;
    static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() throws Exception {
        kafka = new EmbeddedKafkaKraftBroker(1, 2);
        kafka.afterPropertiesSet();
        // The broker publishes its address as the system property spring.kafka.bootstrap-servers, which every later
        // context of this JVM would read: a test of how the limiter behaves without Kafka would then find one.
        System.clearProperty("spring.kafka.bootstrap-servers");
        kafka.addTopics(new NewTopic(DECISIONS, 2, (short) 1), new NewTopic(ROLLUP, 2, (short) 1),
                new NewTopic(SCORES, 2, (short) 1).configs(Map.of("cleanup.policy", "compact")));
        redis = RedisServers.start();
        upstream = StubUpstream.start();
        Path stateDir = Files.createTempDirectory("abuse-rollup");
        Properties streams = new RollupSettings(kafka.getBrokersAsString(), DECISIONS, ROLLUP, "abuse-e2e",
                stateDir.toString()).streamsProperties();
        streams.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        streams.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        rollup = new KafkaStreams(new RollupTopology(DECISIONS, ROLLUP,
                new AbuseScoring(SCORES, Duration.ofSeconds(2), 20, 0.5, 0.9)).build(), streams);
        rollup.start();
        gateway = new SpringApplicationBuilder(AbuseGatewayApplication.class).properties(
                "server.port=0", "server.address=127.0.0.1", "spring.data.redis.url=" + redis.url(),
                "management.server.port=0", "management.server.address=127.0.0.1",
                "management.endpoints.web.exposure.include=health",
                "ratelimit.management.security.enabled=true",
                "ratelimit.management.security.admin.password=" + ADMIN_PASSWORD,
                "ratelimit.store.timeout=2s",
                "spring.cloud.gateway.server.webflux.routes[0].id=api",
                "spring.cloud.gateway.server.webflux.routes[0].uri=" + upstream.uri(),
                "spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/api/**",
                "ratelimit.default-tier=free", "ratelimit.api-key.unknown.policy=default-tier",
                "ratelimit.api-key.min-length=0",
                "ratelimit.tiers.free.limits.default.capacity=20",
                "ratelimit.tiers.free.limits.default.refill-tokens=20",
                "ratelimit.tiers.free.limits.default.refill-period=2s",
                "ratelimit.events.kafka.bootstrap-servers=" + kafka.getBrokersAsString(),
                "ratelimit.events.kafka.topic=" + DECISIONS,
                "ratelimit.abuse.enabled=true", "ratelimit.abuse.min-factor=0.1", "ratelimit.abuse.half-life=4s",
                "ratelimit.abuse.kafka.bootstrap-servers=" + kafka.getBrokersAsString(),
                "ratelimit.abuse.kafka.topic=" + SCORES, "ratelimit.abuse.kafka.publish-timeout=2s").run();
        port = Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port"));
        managementPort = Integer.parseInt(gateway.getEnvironment().getProperty("local.management.port"));
        AbuseScoreListener listener = gateway.getBean(AbuseScoreListener.class);
        await("the score topic read to its end", listener::caughtUp);
    }

    @AfterAll
    static void stop() throws Exception {
        if (gateway != null) {
            gateway.close();
        }
        if (rollup != null) {
            rollup.close(Duration.ofSeconds(10));
        }
        if (upstream != null) {
            upstream.close();
        }
        if (redis != null) {
            redis.close();
        }
        if (kafka != null) {
            kafka.destroy();
        }
    }

    @Test
    @Order(1)
    void anAbusiveClientIsScoredByTheRollupRefusedSoonerThenWholeAgainAfterDecay() throws Exception {
        AbuseScores scores = gateway.getBean(AbuseScores.class);
        String abuser = clientId("abuser");
        // 200 requests as fast as they go against a bucket of 20 (10 a second back): most are refused.
        int abuserAdmitted = burst("abuser", 200);
        int wellBehavedAdmitted = burst("well-behaved", 10);
        assertThat(abuserAdmitted).as("the abuser's first burst").isLessThan(150);
        assertThat(wellBehavedAdmitted).isEqualTo(10);
        await("the rollup's score lowers the abuser's limits", () -> scores.factorFor(abuser) < 0.5);
        assertThat(scores.viewOf(abuser).source()).isEqualTo("rollup");
        assertThat(scores.factorFor(clientId("well-behaved"))).as("the well-behaved client has no score")
                .isEqualTo(1.0);
        double factor = scores.factorFor(abuser);
        // A newcomer of the same tier has its whole bucket of 20; the abuser's is capped at its lowered capacity.
        int lowered = burst("abuser", 20);
        int whole = burst("newcomer", 20);
        System.out.printf("abuse e2e: factor %.2f, abuser admitted %d of 20, newcomer %d of 20%n", factor,
                lowered, whole);
        assertThat(whole).as("a client of the same tier without a score").isGreaterThanOrEqualTo(18);
        assertThat(lowered).as("the scored client, at factor %.2f", factor).isLessThanOrEqualTo(
                (int) Math.ceil(20 * (factor + 0.02)) + 2);
        assertThat(lowered).isLessThan(whole);
        await("the lowering decays away", () -> scores.factorFor(abuser) == 1.0);
        Thread.sleep(2_500); // the bucket refills at its whole rate: 2 s to full
        assertThat(burst("abuser", 20)).as("the abuser's limit, whole again").isGreaterThanOrEqualTo(18);
    }

    @Test
    @Order(2)
    void anOperatorPushThroughTheRulesApiLowersTheLimitAndItsRemovalRestoresIt() throws Exception {
        AbuseScores scores = gateway.getBean(AbuseScores.class);
        String client = clientId("pushed-by-api");
        HttpResponse<String> put = api("PUT", client, "{\"factor\":0.1,\"source\":\"fraud-desk\"}", true);
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        assertThat(put.body()).contains("\"source\":\"fraud-desk (ratelimit-admin)\"");
        assertThat(scores.factorFor(client)).as("0.1, decaying with a half-life of 4 s").isLessThan(0.3);
        assertThat(burst("pushed-by-api", 20)).as("a bucket of 2 to 6").isLessThanOrEqualTo(8);

        HttpResponse<String> listed = api("GET", null, null, true);
        assertThat(listed.statusCode()).isEqualTo(200);
        assertThat(listed.body()).contains(client);

        assertThat(api("PUT", client, "{\"factor\":1.5}", true).statusCode()).as("a factor above 1").isEqualTo(400);
        assertThat(api("PUT", client, "not json", true).statusCode()).isEqualTo(400);
        assertThat(api("PUT", "not a client id", "{\"score\":1}", true).statusCode()).isIn(400, 404);
        assertThat(api("PUT", client, "{\"score\":1}", false).statusCode()).as("no credentials").isEqualTo(401);

        assertThat(api("DELETE", client, null, true).statusCode()).isEqualTo(204);
        assertThat(scores.factorFor(client)).isEqualTo(1.0);
        // the tombstone reaches the topic too: read back, it keeps the client whole
        await("the tombstone read back", () -> gateway.getBean(AbuseScoreListener.class).applied() >= 2);
        assertThat(scores.factorFor(client)).isEqualTo(1.0);
    }

    @Test
    @Order(3)
    void anOperatorsOwnSystemPushesThroughTheTopicAndAMalformedRecordHoldsUpNothing() throws Exception {
        AbuseScores scores = gateway.getBean(AbuseScores.class);
        AbuseScoreListener listener = gateway.getBean(AbuseScoreListener.class);
        String client = clientId("pushed-by-topic");
        long skippedBefore = listener.skipped();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.<String, Object>of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.getBrokersAsString()), new StringSerializer(),
                new StringSerializer())) {
            producer.send(new ProducerRecord<>(SCORES, client, "{\"score\":NaN")).get();
            producer.send(new ProducerRecord<>(SCORES, client, "{\"factor\":7}")).get();
            producer.send(new ProducerRecord<>(SCORES, client, "{\"score\":1,\"source\":\"waf\"}")).get();
        }
        await("the good record after the malformed ones applies", () -> scores.factorFor(client) < 0.3);
        assertThat(listener.skipped() - skippedBefore).isEqualTo(2);
        assertThat(scores.viewOf(client).source()).isEqualTo("waf");
        assertThat(burst("pushed-by-topic", 20)).isLessThanOrEqualTo(8);
        Map<String, Object> health = gateway.getBean("abuseScoresHealthIndicator", HealthIndicator.class).health()
                .getDetails();
        assertThat(health).containsEntry("topicRead", true).doesNotContainKey("problem");
    }

    /** Last: the broker goes away; the score held stays in force (decaying) and the health says Kafka is gone. */
    @Test
    @Order(4)
    void withKafkaGoneTheScoresHeldStayAndDecay() throws Exception {
        AbuseScores scores = gateway.getBean(AbuseScores.class);
        String client = clientId("scored-before-the-outage");
        HttpResponse<String> put = api("PUT", client, "{\"factor\":0.1}", true);
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        rollup.close(Duration.ofSeconds(10));
        rollup = null;
        BrokerServer broker = kafka.getCluster().brokers().values().iterator().next();
        broker.shutdown();
        broker.awaitShutdown();
        HealthIndicator health = gateway.getBean("abuseScoresHealthIndicator", HealthIndicator.class);
        await("the health reports Kafka unreadable", () -> health.health().getDetails().containsKey("problem"));
        assertThat(health.health().getStatus().getCode()).isEqualTo("UP");
        double factor = scores.factorFor(client);
        assertThat(factor).as("the score held, decaying").isGreaterThan(0.1).isLessThan(1.0);
        // the bucket holds its lowered capacity (20 × the factor, rounded down to hundredths, then up) and refills a
        // little during the burst
        assertThat(burst("scored-before-the-outage", 20)).as("still lowered, at factor %.2f", factor)
                .isLessThanOrEqualTo((int) Math.ceil(20 * factor) + 3).isLessThan(20);
        HttpResponse<String> refused = api("PUT", clientId("during-the-outage"), "{\"factor\":0.1}", true);
        assertThat(refused.statusCode()).as("not published, nothing changed").isEqualTo(503);
        assertThat(scores.factorFor(clientId("during-the-outage"))).isEqualTo(1.0);
    }

    static String clientId(String apiKey) {
        return gateway.getBean(ClientIdKeyring.class).current().of(apiKey);
    }

    /** Sends {@code requests} one after the other; the number admitted. */
    static int burst(String apiKey, int requests) throws Exception {
        int admitted = 0;
        for (int i = 0; i < requests; i++) {
            HttpResponse<Void> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/api/x")).header("X-API-Key", apiKey).build(), HttpResponse.BodyHandlers.discarding());
            assertThat(response.statusCode()).isIn(200, 429);
            admitted += response.statusCode() == 200 ? 1 : 0;
        }
        return admitted;
    }

    static HttpResponse<String> api(String method, String client, String body, boolean authenticated)
            throws Exception {
        String path = "/v1/rules/_abuse-scores" + (client == null ? "" : "/" + client.replace(" ", "%20"));
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (authenticated) {
            request.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(("ratelimit-admin:"
                    + ADMIN_PASSWORD).getBytes(StandardCharsets.UTF_8)));
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("waited " + WAIT + " for " + what);
            }
            Thread.sleep(100);
        }
    }
}

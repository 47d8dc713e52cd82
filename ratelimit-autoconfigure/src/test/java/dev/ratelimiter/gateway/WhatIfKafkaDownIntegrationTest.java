package dev.ratelimiter.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A what-if replay while Kafka does not answer: a problem (503) once the replay's deadline has passed, never a 500 or
 * a request left hanging; and a second replay while the first is still waiting is refused (429), not queued behind it.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class WhatIfKafkaDownIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    @LocalManagementPort
    int managementPort;

    /** A loopback port nothing listens on: connections to it are refused at once, as to a broker that is down. */
    static final int closedPort = closedPort();

    static int closedPort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        fixture.route(registry, 0, "api", "/api/**");
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.events.kafka.bootstrap-servers", () -> "127.0.0.1:" + closedPort);
        registry.add("management.server.port", () -> "0");
        registry.add("management.server.address", () -> "127.0.0.1");
        registry.add("ratelimit.rules-api.what-if.timeout", () -> "5s");
    }

    @AfterAll
    static void stop() {
        upstream.close();
    }

    @Test
    void kafkaDownIsA503AfterTheDeadlineAndASecondReplayMeanwhileIsA429() {
        Instant to = Instant.now();
        String request = "{\"rule\": {\"key\": [\"api-key\"], \"capacity\": 2, \"refillTokens\": 1, "
                + "\"refillPeriod\": \"1h\"}, \"from\": \"" + to.minusSeconds(3600) + "\", \"to\": \"" + to + "\"}";
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + managementPort).build();
        List<JsonNode> answers = Flux.range(0, 2)
                .flatMap(i -> client.post().uri("/v1/rules/proposal/what-if").contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(request).exchangeToMono(response -> response.bodyToMono(String.class)
                                .map(body -> JsonMapper.builder().build().readTree(body))))
                .collectList().block(Duration.ofSeconds(60));
        assertThat(answers).extracting(answer -> answer.get("status").asInt()).containsExactlyInAnyOrder(503, 429);
        JsonNode unavailable = answers.stream().filter(answer -> answer.get("status").asInt() == 503).findFirst()
                .orElseThrow();
        assertThat(unavailable.get("error").asString()).isEqualTo("events_unavailable");
        assertThat(unavailable.get("detail").asString()).contains("within PT5S");
        JsonNode busy = answers.stream().filter(answer -> answer.get("status").asInt() == 429).findFirst()
                .orElseThrow();
        assertThat(busy.get("error").asString()).isEqualTo("replay_busy");
    }
}

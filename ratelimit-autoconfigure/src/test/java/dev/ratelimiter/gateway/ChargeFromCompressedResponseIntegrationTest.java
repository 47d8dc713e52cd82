package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.gateway.ResponseCharges.Outcome;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hostile client of a rule charged from a JSON field of the response: it sends {@code Accept-Encoding: gzip}, the
 * gateway forwards it, the upstream (as LLM APIs do) compresses its answer, and the body scanner reads compressed
 * bytes: the field never goes by, the response is "not reported", and the client pays the minimum for any amount.
 */
class ChargeFromCompressedResponseIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEach();
    static final RedisServerExtension redis = fixture.redis();
    static final BlockingQueue<Charged> charges = new LinkedBlockingQueue<>();

    /** Answers the usage the request's X-Test-Usage names, compressed when the request accepts it. */
    static final DisposableServer upstream = HttpServer.create().host("127.0.0.1").port(0).compress(true)
            .handle((request, response) -> {
                String usage = request.requestHeaders().get("X-Test-Usage", "0");
                String json = "{\"id\":\"cmpl-1\",\"choices\":[],\"usage\":{\"total_tokens\":" + usage + "}}";
                return request.receive().then(response.header("Content-Type", "application/json")
                        .sendString(Mono.just(json)).then());
            })
            .bindNow(Duration.ofSeconds(10));

    static ConfigurableApplicationContext gateway;
    static WebTestClient client;

    record Charged(String rule, Outcome outcome, double tokens) {
    }

    @Configuration(proxyBeanMethods = false)
    static class Recording {

        @Bean
        ResponseCharges.Listener recordingCharges() {
            return (rule, outcome, tokens) -> charges.add(new Charged(rule, outcome, tokens));
        }
    }

    @BeforeAll
    static void startGateway() {
        gateway = GatewayInstance.start(List.of(Recording.class), redis.url(),
                "http://127.0.0.1:" + upstream.port(), "ratelimit.store.type=redis", "ratelimit.store.timeout=2s",
                "ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=1000000000",
                "ratelimit.tiers.free.limits.default.refill-tokens=1000000000",
                "ratelimit.tiers.free.limits.default.refill-period=1h",
                "ratelimit.rules.llm.match.paths[0]=/api/json/**",
                "ratelimit.rules.llm.capacity=1000", "ratelimit.rules.llm.refill-tokens=1000",
                "ratelimit.rules.llm.refill-period=1h",
                "ratelimit.rules.llm.charge-from-response.json-field=usage.total_tokens",
                "ratelimit.rules.llm.charge-from-response.minimum=10");
        GatewayInstance.awaitRedis(gateway);
        client = GatewayInstance.client(gateway);
    }

    @AfterAll
    static void stopGateway() {
        gateway.close();
        upstream.disposeNow(Duration.ofSeconds(5));
    }

    @Test
    void aClientAcceptingGzipIsChargedWhatTheUpstreamReported() throws InterruptedException {
        int plain = client.post().uri("/api/json/chat").header("X-API-Key", "k-plain-01")
                .header("X-Test-Usage", "300").bodyValue("{}").exchange().expectBody(String.class).returnResult()
                .getStatus().value();
        assertThat(plain).isEqualTo(200);
        assertThat(next()).isEqualTo(new Charged("llm", Outcome.CHARGED, 290));

        int gzip = client.post().uri("/api/json/chat").header("X-API-Key", "k-gzip-01")
                .header("X-Test-Usage", "300").header("Accept-Encoding", "gzip").bodyValue("{}").exchange()
                .expectBody(byte[].class).returnResult().getStatus().value();
        assertThat(gzip).isEqualTo(200);
        assertThat(next()).as("the same answer, compressed because the client asked")
                .isEqualTo(new Charged("llm", Outcome.CHARGED, 290));
    }

    private static Charged next() throws InterruptedException {
        Charged charged = charges.poll(30, TimeUnit.SECONDS);
        assertThat(charged).as("a charge reported within 30 s").isNotNull();
        return charged;
    }
}

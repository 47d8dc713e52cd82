package dev.ratelimiter.mvc;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.gateway.ResponseCharges;
import dev.ratelimiter.gateway.ResponseCharges.Outcome;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Gateway Server MVC: a client of a rule charged from a JSON field sends {@code Accept-Encoding: gzip}; an upstream
 * that compresses when asked answers gzip, the scanner reads compressed bytes, and the client must still be charged
 * what the upstream reported, not only the minimum.
 */
class MvcChargeFromCompressedResponseIntegrationTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();
    static final BlockingQueue<Charged> charges = new LinkedBlockingQueue<>();

    static final DisposableServer upstream = HttpServer.create().host("127.0.0.1").port(0).compress(true)
            .handle((request, response) -> {
                String usage = request.requestHeaders().get("X-Test-Usage", "0");
                String json = "{\"id\":\"cmpl-1\",\"choices\":[],\"usage\":{\"total_tokens\":" + usage + "}}";
                return request.receive().then(response.header("Content-Type", "application/json")
                        .sendString(Mono.just(json)).then());
            })
            .bindNow(Duration.ofSeconds(10));

    static ConfigurableApplicationContext gateway;
    static Http client;

    record Charged(String rule, Outcome outcome, double tokens) {
    }

    @BeforeAll
    static void startGateway() {
        ApplicationContextInitializer<GenericApplicationContext> recording = context -> context.registerBean(
                "recordingCharges", ResponseCharges.Listener.class,
                () -> (rule, outcome, tokens) -> charges.add(new Charged(rule, outcome, tokens)));
        gateway = MvcGatewayApplications.start(fixture, List.of(recording), "ratelimit.store.timeout=2s",
                "spring.cloud.gateway.server.webmvc.routes[0].uri=http://127.0.0.1:" + upstream.port(),
                "ratelimit.rules.llm.match.paths[0]=/api/json/**",
                "ratelimit.rules.llm.capacity=1000", "ratelimit.rules.llm.refill-tokens=1000",
                "ratelimit.rules.llm.refill-period=1h",
                "ratelimit.rules.llm.charge-from-response.json-field=usage.total_tokens",
                "ratelimit.rules.llm.charge-from-response.minimum=10");
        client = new Http(MvcGatewayApplications.port(gateway, false));
    }

    @AfterAll
    static void stopGateway() {
        gateway.close();
        upstream.disposeNow(Duration.ofSeconds(5));
    }

    @Test
    void aClientAcceptingGzipIsChargedWhatTheUpstreamReported() throws Exception {
        HttpResponse<String> plain = client.getAs("/api/json/chat", null, "X-API-Key", "mvc-plain-01",
                "X-Test-Usage", "300");
        assertThat(plain.statusCode()).isEqualTo(200);
        assertThat(next()).isEqualTo(new Charged("llm", Outcome.CHARGED, 290));

        HttpResponse<String> gzip = client.getAs("/api/json/chat", null, "X-API-Key", "mvc-gzip-01",
                "X-Test-Usage", "300", "Accept-Encoding", "gzip");
        assertThat(gzip.statusCode()).isEqualTo(200);
        assertThat(next()).as("the same answer, compressed because the client asked")
                .isEqualTo(new Charged("llm", Outcome.CHARGED, 290));
    }

    private static Charged next() throws InterruptedException {
        Charged charged = charges.poll(30, TimeUnit.SECONDS);
        assertThat(charged).as("a charge reported within 30 s").isNotNull();
        return charged;
    }
}

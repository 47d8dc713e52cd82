package dev.ratelimiter.sample;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The API behind the sample gateway, served in the same process on its own loopback port so that the
 * sample needs no other service. The gateway proxies to it over real HTTP, exactly as to a remote API.
 */
public final class DemoUpstream implements AutoCloseable {

    private final DisposableServer server;

    public DemoUpstream(int port) {
        this.server = HttpServer.create()
                .host("127.0.0.1")
                .port(port)
                .route(routes -> routes.get("/api/hello", (request, response) -> response
                        .header("Content-Type", "application/json")
                        .sendString(Mono.fromSupplier(() -> "{\"message\":\"Hello from the demo upstream\",\"time\":\""
                                + Instant.now() + "\"}"), StandardCharsets.UTF_8))
                        // A slow report: two seconds of work, the endpoint concurrency limits protect.
                        .get("/reports/run", (request, response) -> response
                                .header("Content-Type", "application/json")
                                .sendString(Mono.delay(Duration.ofSeconds(2)).map(tick -> "{\"report\":\"done\","
                                        + "\"time\":\"" + Instant.now() + "\"}"), StandardCharsets.UTF_8))
                        // An LLM-like API reporting the tokens each answer used (DemoLlmApi).
                        .post("/v1/chat/completions", DemoLlmApi::chatCompletions))
                .bindNow(Duration.ofSeconds(10));
    }

    public String uri() {
        return "http://127.0.0.1:" + server.port();
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(5));
    }
}

package dev.ratelimiter.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;

/**
 * An upstream that reports what each answer "used", as an LLM API reports tokens: the amount is the request's
 * {@code X-Test-Usage} header, answered per path in the JSON body ({@code /api/json}, in chunks of a few bytes so the
 * field is cut across them), as server-sent events with the usage in the last one ({@code /api/sse}), in a header
 * ({@code /api/header}), not at all ({@code /api/none}), with a 500 ({@code /api/error}), as a body that never ends
 * ({@code /api/endless}; {@code /api/endless-header} with the amount in a header), or as a body whose end waits for {@link #release()} ({@code /api/gated}).
 */
public final class UsageUpstream implements AutoCloseable {

    private final DisposableServer server;
    private volatile Sinks.Empty<Void> gate = Sinks.empty();
    private final java.util.concurrent.atomic.AtomicInteger gated = new java.util.concurrent.atomic.AtomicInteger();

    public UsageUpstream() {
        this.server = HttpServer.create().host("127.0.0.1").port(0)
                .handle((request, response) -> {
                    String usage = request.requestHeaders().get("X-Test-Usage", "0");
                    String path = request.path();
                    return request.receive().then(answer(path, usage, response));
                })
                .bindNow(Duration.ofSeconds(10));
    }

    private Mono<Void> answer(String path, String usage, HttpServerResponse response) {
        String json = "{\"id\":\"cmpl-1\",\"choices\":[{\"message\":{\"content\":\"a \\\"usage\\\": {\\\"total_tokens\\\""
                + ": 99999} }\"}}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":" + usage
                + "}}";
        if (path.startsWith("api/json")) {
            return response.header("Content-Type", "application/json").sendString(chunks(json, 5)).then();
        }
        if (path.startsWith("api/sse")) {
            String events = "data: {\"choices\":[{\"delta\":{\"content\":\"{\"}}],\"usage\":null}\n\n"
                    + "data: {\"choices\":[],\"usage\":{\"total_tokens\":" + usage + "}}\n\ndata: [DONE]\n\n";
            return response.header("Content-Type", "text/event-stream").sendString(chunks(events, 7)).then();
        }
        if (path.startsWith("api/header")) {
            return response.header("X-Usage-Tokens", usage).sendString(Mono.just("{}")).then();
        }
        if (path.startsWith("api/error")) {
            return response.status(500).header("Content-Type", "application/json").sendString(Mono.just(json)).then();
        }
        if (path.startsWith("api/endless-header")) {
            return response.header("Content-Type", "application/json").header("X-Usage-Tokens", usage)
                    .sendString(Flux.concat(Mono.just("{\"choices\":["), Flux.never())).then();
        }
        if (path.startsWith("api/endless")) {
            return response.header("Content-Type", "application/json")
                    .sendString(Flux.concat(Mono.just("{\"choices\":["), Flux.never())).then();
        }
        if (path.startsWith("api/gated")) {
            Sinks.Empty<Void> released = gate;
            gated.incrementAndGet();
            return response.header("Content-Type", "application/json").sendString(Flux.concat(
                    Mono.just(json.substring(0, 10)), released.asMono().then(Mono.just(json.substring(10))))).then();
        }
        return response.header("Content-Type", "application/json").sendString(Mono.just("{\"usage\":{}}")).then();
    }

    /** The text in pieces of {@code size} characters, each flushed on its own. */
    private static Flux<String> chunks(String text, int size) {
        List<String> pieces = new ArrayList<>();
        for (int at = 0; at < text.length(); at += size) {
            pieces.add(text.substring(at, Math.min(text.length(), at + size)));
        }
        return Flux.fromIterable(pieces);
    }

    /** Lets the gated answers in progress end, and gates the next ones again. */
    public void release() {
        Sinks.Empty<Void> released = gate;
        gate = Sinks.empty();
        released.tryEmitEmpty();
    }

    /** How many gated answers were started. */
    public int gated() {
        return gated.get();
    }

    public String uri() {
        return "http://127.0.0.1:" + server.port();
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(5));
    }
}

package dev.ratelimiter.samplemvc;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * The API behind the sample, served in the same process on its own loopback port so that the sample needs no other
 * service; the gateway proxies to it over real HTTP. {@code /reports/run} takes two seconds, the endpoint a
 * concurrency limit protects.
 */
final class DemoUpstream implements AutoCloseable {

    private final HttpServer server;

    DemoUpstream(int port) {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("The demo upstream cannot listen on 127.0.0.1:" + port, ex);
        }
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/api/hello", exchange -> answer(exchange,
                "{\"message\":\"Hello from the demo upstream\",\"time\":\"" + Instant.now() + "\"}"));
        server.createContext("/status", exchange -> answer(exchange, "{\"status\":\"up\"}"));
        server.createContext("/reports/run", exchange -> {
            try {
                Thread.sleep(2000);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            answer(exchange, "{\"report\":\"done\",\"time\":\"" + Instant.now() + "\"}");
        });
        server.start();
    }

    private static void answer(HttpExchange exchange, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}

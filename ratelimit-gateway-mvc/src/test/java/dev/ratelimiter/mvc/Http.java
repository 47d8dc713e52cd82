package dev.ratelimiter.mvc;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** Plain HTTP requests to the gateway under test, each with an API key, answered within a generous bound. */
final class Http {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    private final int port;

    Http(int port) {
        this.port = port;
    }

    HttpResponse<String> get(String path, String apiKey) throws IOException, InterruptedException {
        return client.send(request(path, apiKey), HttpResponse.BodyHandlers.ofString());
    }

    CompletableFuture<HttpResponse<String>> getLater(String path, String apiKey) {
        return client.sendAsync(request(path, apiKey), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> getWithTwoKeys(String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(TIMEOUT)
                .header("X-API-Key", "one").header("X-API-Key", "two").GET().build();
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest request(String path, String apiKey) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(TIMEOUT)
                .header("X-API-Key", apiKey).GET().build();
    }
}

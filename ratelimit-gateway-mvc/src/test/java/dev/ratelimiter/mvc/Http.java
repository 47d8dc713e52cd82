package dev.ratelimiter.mvc;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Plain HTTP requests to the gateway under test, with an API key or a bearer token and headers, answered within a
 * generous bound.
 */
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

    /** A GET with the token as a bearer (none when null) and these header name/value pairs. */
    HttpResponse<String> getAs(String path, String token, String... headers) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(TIMEOUT).GET();
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The statuses of {@code requests} such GETs, one after another. */
    List<Integer> statuses(int requests, String path, String token, String... headers)
            throws IOException, InterruptedException {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            statuses.add(getAs(path, token, headers).statusCode());
        }
        return statuses;
    }

    private HttpRequest request(String path, String apiKey) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(TIMEOUT)
                .header("X-API-Key", apiKey).GET().build();
    }
}

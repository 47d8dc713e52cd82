package dev.ratelimiter.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Requests sent one after another, for tests that count what a bucket lets through. */
final class Requests {

    private Requests() {
    }

    /** The statuses of {@code requests} GETs of {@code path} with these headers, in order. */
    static List<Integer> statuses(WebTestClient client, int requests, String path, Consumer<HttpHeaders> headers) {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            statuses.add(client.get().uri(path).headers(headers).exchange().returnResult(String.class).getStatus()
                    .value());
        }
        return statuses;
    }
}

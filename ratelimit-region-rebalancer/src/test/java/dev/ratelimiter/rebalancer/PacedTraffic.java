package dev.ratelimiter.rebalancer;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One client's requests, paced per region (requests a second to each region's gateway), and what came back: status,
 * when, and the region's share the policy header stated.
 */
final class PacedTraffic {

    /**
     * One response. {@code atMillis} is when its request was sent: windows are counted by it, so a response delayed
     * on a busy machine still counts where the request was decided, not later.
     */
    record Response(String region, long atMillis, int status, long share) {
    }

    private static final Pattern QUOTA = Pattern.compile(";q=(\\d+)");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final long startMillis;

    PacedTraffic(long startMillis) {
        this.startMillis = startMillis;
    }

    /**
     * Sends {@code perSecond.get(region)} requests a second to each region's {@code ports} for {@code duration}, as
     * {@code apiKey}, evenly spaced; returns every response (times from this traffic's start).
     */
    List<Response> run(Map<String, Integer> ports, Map<String, Double> perSecond, String apiKey, Duration duration) {
        List<Response> responses = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<?>> pending = new ArrayList<>();
        long begin = System.nanoTime();
        long end = begin + duration.toNanos();
        Map<String, Double> sent = new java.util.HashMap<>();
        while (System.nanoTime() < end) {
            double elapsed = (System.nanoTime() - begin) / 1e9;
            perSecond.forEach((region, rate) -> {
                double due = elapsed * rate;
                while (sent.getOrDefault(region, 0.0) < due) {
                    sent.merge(region, 1.0, Double::sum);
                    pending.add(send(region, ports.get(region), apiKey, responses));
                }
            });
            sleep(5);
        }
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).orTimeout(30, java.util.concurrent.TimeUnit.SECONDS)
                .exceptionally(failure -> null).join();
        List<Response> all = new ArrayList<>(responses);
        all.sort(java.util.Comparator.comparingLong(Response::atMillis));
        return all;
    }

    private CompletableFuture<?> send(String region, int port, String apiKey, List<Response> into) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/x"))
                .header("X-API-Key", apiKey).timeout(Duration.ofSeconds(10)).GET().build();
        long at = System.currentTimeMillis() - startMillis;
        return http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).handle((response, failure) -> {
            if (failure != null) {
                into.add(new Response(region, at, -1, -1));
                return null;
            }
            Matcher quota = QUOTA.matcher(response.headers().firstValue("RateLimit-Policy").orElse(""));
            into.add(new Response(region, at, response.statusCode(), quota.find() ? Long.parseLong(quota.group(1))
                    : -1));
            return null;
        });
    }

    /** Responses with status 200 in [from, to) milliseconds, of {@code region} or (null) of all. */
    static long admitted(List<Response> responses, String region, long from, long to) {
        return responses.stream().filter(r -> r.status() == 200 && r.atMillis() >= from && r.atMillis() < to)
                .filter(r -> region == null || r.region().equals(region)).count();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}

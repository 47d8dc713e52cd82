package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A steady load through the gateway: each client sends one request per interval for a bounded time, without waiting
 * for earlier answers (an open loop, like real clients), and every answer's status and latency is recorded.
 */
final class Load {

    /** One answer. */
    record Result(String client, int status, long latencyNanos, long sentAtNanos) {
    }

    private Load() {
    }

    /**
     * The load's own timers, off Reactor's parallel scheduler: its workers are shared with the timeouts of every
     * request in flight, so cancelling an interval there can wait for a worker's queue lock, which BlockHound reports
     * as a blocking call on a non-blocking thread and aborts — leaving that lock, and the worker, wedged for the rest of
     * the JVM (seen in a full run: one test failed so, and the next one's load never finished).
     */
    private static final Scheduler TIMERS = Schedulers.newBoundedElastic(4, 100_000, "test-load", 60, true);

    static List<Result> run(int port, String path, Map<String, Duration> intervals, Duration duration) {
        WebClient web = WebClient.create("http://127.0.0.1:" + port);
        List<Result> results = Collections.synchronizedList(new ArrayList<>());
        long start = System.nanoTime();
        Flux.fromIterable(intervals.entrySet())
                .flatMap(client -> Flux.interval(Duration.ZERO, client.getValue(), TIMERS)
                        .take(duration, TIMERS)
                        .flatMap(tick -> {
                            long sent = System.nanoTime();
                            return web.get().uri(path).header("X-API-Key", client.getKey())
                                    .exchangeToMono(response -> response.releaseBody()
                                            .thenReturn(response.statusCode().value()))
                                    .timeout(Duration.ofSeconds(5), TIMERS)
                                    .onErrorReturn(599)
                                    .doOnNext(status -> results.add(new Result(client.getKey(), status,
                                            System.nanoTime() - sent, sent - start)));
                        }, 256))
                .then()
                .block(duration.plusSeconds(10));
        return List.copyOf(results);
    }

    static long count(List<Result> results, String client, int status) {
        return results.stream().filter(r -> r.client().equals(client) && r.status() == status).count();
    }

    /** The 99th percentile latency of allowed (200) answers, in milliseconds. */
    static double p99Millis(List<Result> results) {
        return percentileMillis(results, 0.99);
    }

    /** The median latency of allowed (200) answers, in milliseconds. */
    static double p50Millis(List<Result> results) {
        return percentileMillis(results, 0.50);
    }

    private static double percentileMillis(List<Result> results, double percentile) {
        List<Long> latencies = results.stream().filter(r -> r.status() == 200).map(Result::latencyNanos).sorted()
                .toList();
        if (latencies.isEmpty()) {
            return Double.NaN;
        }
        int index = (int) Math.min(latencies.size() - 1, Math.max(0, Math.ceil(latencies.size() * percentile) - 1));
        return latencies.get(index) / 1e6;
    }

    static double maxMillis(List<Result> results) {
        return results.stream().mapToLong(Result::latencyNanos).max().orElse(0) / 1e6;
    }

    static void sleep(Duration duration) {
        Mono.delay(duration).block();
    }
}

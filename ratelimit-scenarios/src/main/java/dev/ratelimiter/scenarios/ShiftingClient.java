package dev.ratelimiter.scenarios;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.channel.ChannelOption;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * One API key sending open loop (at its rate whatever the answers) to the region gateways, phase after phase, each
 * phase with its own rate per region; every answer kept, with the share its policy header stated.
 */
final class ShiftingClient implements AutoCloseable {

    /** Generous: a slow answer is not what this scenario measures, and one that times out counts as no answer. */
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final LoopResources loops = LoopResources.create("scenario-regions", 1, true);
    private final ConnectionProvider pool = ConnectionProvider.builder("scenario-regions").maxConnections(200)
            .pendingAcquireTimeout(TIMEOUT).build();
    private final Map<String, HttpClient> clients = new LinkedHashMap<>();

    ShiftingClient(Map<String, Integer> ports) {
        ports.forEach((region, port) -> clients.put(region, HttpClient.create(pool).runOn(loops)
                .baseUrl("http://127.0.0.1:" + port).option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 1_000)
                .responseTimeout(TIMEOUT)));
    }

    /** Plays the phases one after the other from now, as {@code apiKey}; returns every answer, in order sent. */
    List<RegionAnswer> play(String apiKey, List<Phase> phases) {
        Queue<RegionAnswer> answers = new ConcurrentLinkedQueue<>();
        AtomicInteger inFlight = new AtomicInteger();
        long start = System.nanoTime();
        for (Phase phase : phases) {
            Map<String, Long> sent = new LinkedHashMap<>();
            long phaseStart = start + phase.fromMillis() * 1_000_000L;
            long phaseEnd = start + phase.toMillis() * 1_000_000L;
            Pause.until(start, phase.fromSecond());
            for (long now = System.nanoTime(); now < phaseEnd; now = System.nanoTime()) {
                double elapsed = (now - phaseStart) / 1e9;
                phase.rates().forEach((region, rate) -> {
                    // requests due by now at this rate, so a late wake-up catches up instead of sending fewer
                    for (long n = sent.getOrDefault(region, 0L); n < (long) (rate * elapsed); n++) {
                        send(apiKey, region, start, answers, inFlight);
                        sent.merge(region, 1L, Long::sum);
                    }
                });
                Pause.millis(5);
            }
        }
        long deadline = System.nanoTime() + TIMEOUT.plusSeconds(2).toNanos();
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            Pause.millis(20);
        }
        List<RegionAnswer> inOrder = new ArrayList<>(answers);
        inOrder.sort(Comparator.comparingLong(RegionAnswer::sentMillis));
        return inOrder;
    }

    private void send(String apiKey, String region, long start, Queue<RegionAnswer> answers, AtomicInteger inFlight) {
        long sentMillis = (System.nanoTime() - start) / 1_000_000L;
        inFlight.incrementAndGet();
        clients.get(region).headers(h -> h.set("X-API-Key", apiKey)).get().uri("/api/hello")
                .responseSingle((response, body) -> body.then(Mono.fromSupplier(() -> RegionAnswer.of(region,
                        sentMillis, response.status().code(), response.responseHeaders().get("RateLimit-Policy")))))
                .timeout(TIMEOUT.plusMillis(500))
                .onErrorReturn(RegionAnswer.none(region, sentMillis))
                .defaultIfEmpty(RegionAnswer.none(region, sentMillis))
                .subscribe(answer -> {
                    answers.add(answer);
                    inFlight.decrementAndGet();
                });
    }

    @Override
    public void close() {
        pool.disposeLater().block(Duration.ofSeconds(5));
        loops.disposeLater().block(Duration.ofSeconds(5));
    }
}

package dev.ratelimiter.scenarios;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/**
 * The API behind the gateways: a Reactor Netty server on loopback that answers 200 at once, except {@code /reports/**}
 * which waits {@link #reportDelay(Duration)}, and {@code /v1/chat/completions}, answered like an LLM API
 * ({@link LlmTokensScenario#answer}). Counts what reached it per second, per path prefix and per API key, and
 * the most requests of one key in progress at once.
 */
final class Upstream implements AutoCloseable {

    static final int MAX_SECONDS = 600;

    private final LoopResources loops = LoopResources.create("scenario-upstream", 1, true);
    private final DisposableServer server;
    private final AtomicLong hits = new AtomicLong();
    private final Map<String, AtomicLong> hitsByPrefix = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> hitsByKey = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger[]> inFlightByKey = new ConcurrentHashMap<>();
    private volatile AtomicLongArray perSecond = new AtomicLongArray(MAX_SECONDS);
    private volatile long startNanos = System.nanoTime();
    private volatile Duration reportDelay = Duration.ZERO;
    private final java.util.Queue<Long> edgeArrivals = new java.util.concurrent.ConcurrentLinkedQueue<>();

    Upstream() {
        byte[] body = "{\"upstream\":\"scenario\"}".getBytes(StandardCharsets.UTF_8);
        this.server = HttpServer.create().runOn(loops).host("127.0.0.1").port(0)
                .handle((request, response) -> {
                    hits.incrementAndGet();
                    int second = (int) ((System.nanoTime() - startNanos) / 1_000_000_000L);
                    if (second >= 0 && second < MAX_SECONDS) {
                        perSecond.incrementAndGet(second);
                    }
                    String path = request.fullPath();
                    int slash = path.indexOf('/', 1);
                    String prefix = slash < 0 ? path : path.substring(0, slash);
                    hitsByPrefix.computeIfAbsent(prefix, p -> new AtomicLong()).incrementAndGet();
                    String key = request.requestHeaders().get("X-API-Key");
                    AtomicInteger[] inFlight = key == null ? null
                            : inFlightByKey.computeIfAbsent(key, k -> new AtomicInteger[] {new AtomicInteger(),
                                    new AtomicInteger()});
                    if (Scenarios.EDGE_KEY.equals(key)) {
                        edgeArrivals.add(System.nanoTime() - startNanos);
                    }
                    if (key != null) {
                        hitsByKey.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
                        inFlight[1].accumulateAndGet(inFlight[0].incrementAndGet(), Math::max);
                    }
                    Duration delay = prefix.equals("/reports") ? reportDelay : Duration.ZERO;
                    Mono<Void> answer = prefix.equals("/v1") ? LlmTokensScenario.answer(request, response)
                            : response.header("Content-Type", "application/json").sendByteArray(Mono.just(body))
                                    .then();
                    if (!delay.isZero()) {
                        answer = Mono.delay(delay).then(answer);
                    }
                    return answer.doFinally(signal -> {
                        if (inFlight != null) {
                            inFlight[0].decrementAndGet();
                        }
                    });
                })
                .bindNow(Duration.ofSeconds(10));
    }

    String uri() {
        return "http://127.0.0.1:" + server.port();
    }

    void reportDelay(Duration delay) {
        this.reportDelay = delay;
    }

    /** Clears the counters; second 0 of {@link #perSecond(int)} starts now. */
    void reset(long startNanos) {
        hits.set(0);
        hitsByPrefix.clear();
        hitsByKey.clear();
        inFlightByKey.clear();
        edgeArrivals.clear();
        perSecond = new AtomicLongArray(MAX_SECONDS);
        this.startNanos = startNanos;
        reportDelay = Duration.ZERO;
    }

    /** When requests of the window-edge client reached the upstream (ns since the run's start), sorted. */
    long[] edgeArrivals() {
        return edgeArrivals.stream().mapToLong(Long::longValue).sorted().toArray();
    }

    long hits() {
        return hits.get();
    }

    long hits(String prefix) {
        AtomicLong count = hitsByPrefix.get(prefix);
        return count == null ? 0 : count.get();
    }

    long hitsForKey(String key) {
        AtomicLong count = hitsByKey.get(key);
        return count == null ? 0 : count.get();
    }

    int maxInFlight(String key) {
        AtomicInteger[] inFlight = inFlightByKey.get(key);
        return inFlight == null ? 0 : inFlight[1].get();
    }

    long perSecond(int second) {
        return second < MAX_SECONDS ? perSecond.get(second) : 0;
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(5));
        loops.disposeLater().block(Duration.ofSeconds(5));
    }
}

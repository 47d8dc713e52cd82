package dev.ratelimiter.benchmarks.sidebyside;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * A fixed request rate whatever the answers (an open loop, like real clients): for the latency a limiter adds at a
 * load the machine can carry — half the rate at which the gateway without limiter saturates. Requests go out in
 * batches every millisecond; latency is measured from the moment each was due.
 */
final class OpenLoop {

    private OpenLoop() {
    }

    static LoadResult run(String url, double perSecond, Duration duration, int keys) {
        LoopResources loops = LoopResources.create("bench-open", 1, true);
        ConnectionProvider pool = ConnectionProvider.builder("bench-open").maxConnections(512)
                .pendingAcquireMaxCount(-1).build();
        HttpClient client = HttpClient.create(pool).runOn(loops);
        List<Long> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicLong nonOk = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long ticks = duration.toMillis();
        long start = System.nanoTime();
        try {
            Flux.interval(Duration.ofMillis(1)).take(ticks).onBackpressureBuffer()
                    .flatMap(tick -> {
                        long due = start + (tick + 1) * 1_000_000;
                        long dueBefore = (long) Math.floor(perSecond * tick / 1000.0);
                        long dueBy = (long) Math.floor(perSecond * (tick + 1) / 1000.0);
                        return Flux.range(0, (int) (dueBy - dueBefore)).flatMap(i -> {
                            String key = "client-" + (1 + ThreadLocalRandom.current().nextInt(keys));
                            return client.headers(headers -> headers.set("X-API-Key", key)).get().uri(url)
                                    .responseSingle((response, body) -> body.then(Mono.just(response.status().code())))
                                    .doOnNext(status -> {
                                        latencies.add(System.nanoTime() - due);
                                        if (status != 200) {
                                            nonOk.incrementAndGet();
                                        }
                                    })
                                    .onErrorResume(error -> {
                                        failed.incrementAndGet();
                                        return Mono.empty();
                                    });
                        });
                    }, Integer.MAX_VALUE)
                    .blockLast(duration.plusSeconds(30));
        }
        finally {
            pool.disposeLater().block(Duration.ofSeconds(5));
            loops.disposeLater().block(Duration.ofSeconds(5));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        List<Long> sorted = latencies.stream().sorted().toList();
        return new LoadResult(sorted.size() / seconds, ClosedLoop.percentile(sorted, 0.50),
                ClosedLoop.percentile(sorted, 0.99), sorted.size(), nonOk.get(), failed.get());
    }
}

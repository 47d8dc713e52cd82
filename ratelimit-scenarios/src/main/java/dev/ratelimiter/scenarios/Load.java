package dev.ratelimiter.scenarios;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import io.netty.channel.ChannelOption;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * Open-loop load with Reactor Netty's HTTP client: each group of clients sends at a fixed rate whatever the answers
 * (a slow gateway does not slow the load down), its keys in turn, spread over the gateway instances in turn like a
 * load balancer. Every answer is counted by group, status and second; latencies are kept per group.
 */
final class Load implements AutoCloseable {

    static final Duration TIMEOUT = Duration.ofSeconds(2);

    /** Clients sending to one path at {@code rate} per second in all, plus optional bursts. */
    record Group(String name, String path, List<String> keys, double rate, boolean honest, boolean trackKeys,
            List<double[]> bursts) {

        Group(String name, String path, List<String> keys, double rate, boolean honest) {
            this(name, path, keys, rate, honest, keys.size() <= 50, List.of());
        }
    }

    /** What one group got. */
    static final class Stats {

        final Group group;
        final AtomicLong sent = new AtomicLong();
        final AtomicLong ok = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        final AtomicLong unavailable = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final AtomicLongArray okPerSecond = new AtomicLongArray(Upstream.MAX_SECONDS);
        final Map<String, AtomicLong> okByKey = new ConcurrentHashMap<>();
        private long[] latencies = new long[4096];
        private int latencyCount;

        Stats(Group group) {
            this.group = group;
        }

        synchronized void record(long nanos) {
            if (latencyCount == latencies.length) {
                latencies = Arrays.copyOf(latencies, latencies.length * 2);
            }
            latencies[latencyCount++] = nanos;
        }

        long answered() {
            return ok.get() + refused.get() + unavailable.get() + failed.get();
        }

        /** Share of requests not answered 200 (for honest clients: the error rate). */
        double errorRate() {
            long total = answered();
            return total == 0 ? 0 : 1.0 - (double) ok.get() / total;
        }

        /** What the non-200 answers were: refused (429), unavailable (503), failed (timeouts, connection errors). */
        String errors() {
            return "429: " + refused.get() + ", 503: " + unavailable.get() + ", failed: " + failed.get();
        }

        synchronized double percentileMillis(double p) {
            if (latencyCount == 0) {
                return Double.NaN;
            }
            long[] sorted = Arrays.copyOf(latencies, latencyCount);
            Arrays.sort(sorted);
            return sorted[Math.max(0, (int) Math.ceil(latencyCount * p) - 1)] / 1e6;
        }
    }

    private final LoopResources loops = LoopResources.create("scenario-load", 2, true);
    private final ConnectionProvider pool = ConnectionProvider.builder("scenario-load")
            .maxConnections(2_000).pendingAcquireMaxCount(-1).pendingAcquireTimeout(TIMEOUT)
            .maxIdleTime(Duration.ofSeconds(20)).build();
    private final List<HttpClient> clients = new ArrayList<>();

    Load(List<Integer> gatewayPorts) {
        for (int port : gatewayPorts) {
            clients.add(HttpClient.create(pool).runOn(loops).baseUrl("http://127.0.0.1:" + port)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 1_000).responseTimeout(TIMEOUT));
        }
    }

    /** A running load; {@link #await()} blocks until every answer is in. */
    final class Run {

        final List<Stats> stats = new ArrayList<>();
        final long startNanos;
        final Duration duration;
        final AtomicLongArray okPerSecond = new AtomicLongArray(Upstream.MAX_SECONDS);
        final AtomicLongArray refusedPerSecond = new AtomicLongArray(Upstream.MAX_SECONDS);
        final AtomicLongArray failedPerSecond = new AtomicLongArray(Upstream.MAX_SECONDS);
        private final AtomicLong inFlight = new AtomicLong();
        private final Thread pacer;

        Run(List<Group> groups, Duration duration, long startNanos) {
            this.startNanos = startNanos;
            this.duration = duration;
            groups.forEach(g -> stats.add(new Stats(g)));
            this.pacer = new Thread(this::pace, "scenario-load-pacer");
            pacer.setDaemon(true);
            pacer.start();
        }

        private void pace() {
            long end = startNanos + duration.toNanos();
            long[] nextBurst = new long[stats.size()];
            long gatewayTurn = 0;
            while (true) {
                long now = System.nanoTime();
                if (now >= end) {
                    return;
                }
                double elapsed = (now - startNanos) / 1e9;
                for (int g = 0; g < stats.size(); g++) {
                    Stats s = stats.get(g);
                    long due = (long) (s.group.rate() * elapsed);
                    List<double[]> bursts = s.group.bursts();
                    while (nextBurst[g] < bursts.size() && bursts.get((int) nextBurst[g])[0] <= elapsed) {
                        int count = (int) bursts.get((int) nextBurst[g])[1];
                        for (int i = 0; i < count; i++) {
                            send(s, gatewayTurn++);
                        }
                        nextBurst[g]++;
                    }
                    long rateSent = s.sent.get() - burstsSent(s, (int) nextBurst[g]);
                    for (long i = rateSent; i < due; i++) {
                        send(s, gatewayTurn++);
                    }
                }
                Pause.millis(2);
            }
        }

        private long burstsSent(Stats s, int done) {
            long total = 0;
            for (int i = 0; i < done; i++) {
                total += (long) s.group.bursts().get(i)[1];
            }
            return total;
        }

        private void send(Stats s, long turn) {
            long n = s.sent.getAndIncrement();
            List<String> keys = s.group.keys();
            String key = keys.get((int) (n % keys.size()));
            HttpClient client = clients.get((int) (turn % clients.size()));
            long sent = System.nanoTime();
            inFlight.incrementAndGet();
            client.headers(h -> h.set("X-API-Key", key)).get().uri(s.group.path())
                    .responseSingle((response, body) -> body.then(Mono.just(response.status().code())))
                    .timeout(TIMEOUT.plusMillis(500))
                    .onErrorReturn(599)
                    .subscribe(status -> done(s, key, status, sent), error -> done(s, key, 599, sent));
        }

        private void done(Stats s, String key, int status, long sent) {
            long now = System.nanoTime();
            int second = (int) Math.min(Upstream.MAX_SECONDS - 1, Math.max(0, (sent - startNanos) / 1_000_000_000L));
            switch (status) {
                case 200 -> {
                    s.ok.incrementAndGet();
                    s.okPerSecond.incrementAndGet(second);
                    okPerSecond.incrementAndGet(second);
                    if (s.group.trackKeys()) {
                        s.okByKey.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
                    }
                }
                case 429 -> {
                    s.refused.incrementAndGet();
                    refusedPerSecond.incrementAndGet(second);
                }
                case 503 -> {
                    s.unavailable.incrementAndGet();
                    refusedPerSecond.incrementAndGet(second);
                }
                default -> {
                    s.failed.incrementAndGet();
                    failedPerSecond.incrementAndGet(second);
                }
            }
            s.record(now - sent);
            inFlight.decrementAndGet();
        }

        Run await() {
            try {
                pacer.join(duration.toMillis() + 10_000);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
            long deadline = System.nanoTime() + TIMEOUT.plusSeconds(3).toNanos();
            while (inFlight.get() > 0 && System.nanoTime() < deadline) {
                Pause.millis(20);
            }
            return this;
        }

        Stats group(String name) {
            return stats.stream().filter(s -> s.group.name().equals(name)).findFirst().orElseThrow();
        }

        long sent() {
            return stats.stream().mapToLong(s -> s.sent.get()).sum();
        }

        long ok() {
            return stats.stream().mapToLong(s -> s.ok.get()).sum();
        }
    }

    Run start(List<Group> groups, Duration duration, long startNanos) {
        return new Run(groups, duration, startNanos);
    }

    /**
     * Closed loop, for the most a configuration can serve: {@code concurrency} loops each sending its next request as
     * soon as the last is answered, keys spread so that no client is near its quota. Returns requests per second.
     */
    /** Closed loop: {@code concurrency} requests always in flight for {@code duration}; returns 200s per second. */
    double saturate(String path, int concurrency, int keys, Duration duration) {
        AtomicLong answered = new AtomicLong();
        AtomicLong counter = new AtomicLong();
        long end = System.nanoTime() + duration.toNanos();
        long start = System.nanoTime();
        Flux.range(0, concurrency)
                .flatMap(loop -> Mono.defer(() -> {
                    long n = counter.getAndIncrement();
                    return clients.get((int) (n % clients.size()))
                            .headers(h -> h.set("X-API-Key", "sat-" + (n % keys))).get().uri(path)
                            .responseSingle((response, body) -> body.then(Mono.just(response.status().code())))
                            .timeout(TIMEOUT).onErrorReturn(599)
                            .doOnNext(status -> {
                                if (status == 200) {
                                    answered.incrementAndGet();
                                }
                            });
                }).repeat(() -> System.nanoTime() < end), concurrency)
                .then().block(duration.plusSeconds(30));
        return answered.get() / ((System.nanoTime() - start) / 1e9);
    }

    @Override
    public void close() {
        pool.disposeLater().block(Duration.ofSeconds(5));
        loops.disposeLater().block(Duration.ofSeconds(5));
    }
}

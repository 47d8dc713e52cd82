package dev.ratelimiter.benchmarks.sidebyside;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * Saturating load: a fixed number of connections, each sending its next request as soon as the last is answered —
 * wrk ({@code -t1 -c<n> --latency}) when it is installed, else the same with Reactor Netty's client (heavier: it takes
 * more of the machine from the gateway). The allowed path picks one of {@code keys} API keys at random per request;
 * the refused path sends one key.
 */
final class ClosedLoop {

    private static final Pattern RPS = Pattern.compile("Requests/sec:\\s+([0-9.]+)");
    private static final Pattern REQUESTS = Pattern.compile("([0-9]+) requests in");
    private static final Pattern PERCENTILE = Pattern.compile("\\s+(50|99)(?:\\.000)?%\\s+([0-9.]+)(us|ms|s)");
    private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses:\\s+([0-9]+)");
    private static final Pattern SOCKET_ERRORS = Pattern.compile(
            "Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+)");

    static final Duration RESPONSE_TIMEOUT = Duration.ofSeconds(10);

    private final Optional<Path> wrk;
    private final Path workDir;
    private final List<String> launcher;

    /** {@code launcher}: what goes before {@code wrk} on its command line ({@code taskset -c 1} to pin it). */
    ClosedLoop(Path workDir, boolean preferWrk, List<String> launcher) {
        this.wrk = preferWrk ? BenchGateway.onPath("wrk") : Optional.empty();
        this.workDir = workDir;
        this.launcher = List.copyOf(launcher);
    }

    String description() {
        return wrk.map(path -> "wrk " + path).orElse("Reactor Netty closed loop (wrk not installed)");
    }

    /** {@code connections} closed loops against {@code url} for {@code duration}; keys ≤ 1: one fixed key. */
    LoadResult run(String url, int connections, Duration duration, int keys) {
        return wrk.isPresent() ? wrk(url, connections, duration, keys) : java(url, connections, duration, keys);
    }

    /**
     * About {@code perSecond} requests per second from {@code connections} connections that each wait a random
     * pause (exponential, mean connections ÷ rate) before their next request: Poisson-like arrivals at a load the
     * machine can carry, so that the latency measured is the gateway's and not a queue in front of it. wrk measures
     * each request from its send, so the pause is not counted. Without wrk: the Reactor Netty {@link OpenLoop}.
     */
    LoadResult paced(String url, int connections, double perSecond, Duration duration, int keys) {
        return paced(url, connections, perSecond, connections * 1000.0 / perSecond, duration, keys);
    }

    /**
     * {@link #paced} with the mean pause given: each connection's cycle is its pause plus the request's latency, so a
     * pause of connections ÷ rate alone falls short of the rate by the latency; callers calibrate it with a probe.
     */
    LoadResult paced(String url, int connections, double perSecond, double meanPauseMillis, Duration duration,
            int keys) {
        if (wrk.isEmpty()) {
            return OpenLoop.run(url, perSecond, duration, keys);
        }
        return wrk(url, connections, duration, keys, String.format(Locale.ROOT, """
                local mean = %.3f
                delay = function()
                    return math.floor(-math.log(1 - math.random()) * mean + 0.5)
                end
                """, meanPauseMillis));
    }

    private LoadResult wrk(String url, int connections, Duration duration, int keys) {
        return wrk(url, connections, duration, keys, "");
    }

    private LoadResult wrk(String url, int connections, Duration duration, int keys, String pacing) {
        try {
            Path script = workDir.resolve("keys-" + keys + "-" + Integer.toHexString(pacing.hashCode()) + ".lua");
            Files.createDirectories(workDir);
            Files.writeString(script, (keys > 1 ? """
                    math.randomseed(os.time())
                    request = function()
                        return wrk.format("GET", nil, { ["X-API-Key"] = "client-" .. math.random(%d) })
                    end
                    """.formatted(keys) : """
                    request = function()
                        return wrk.format("GET", nil, { ["X-API-Key"] = "deny-client" })
                    end
                    """) + pacing);
            List<String> command = new ArrayList<>(launcher);
            command.addAll(List.of(wrk.get().toString(), "-t1", "-c" + connections,
                    "-d" + duration.toSeconds() + "s", "--latency", "-s", script.toString(), url));
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            process.waitFor();
            return parse(output);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    static LoadResult parse(String output) {
        Matcher rps = RPS.matcher(output);
        Matcher requests = REQUESTS.matcher(output);
        if (!rps.find() || !requests.find()) {
            throw new IllegalStateException("wrk printed no result:\n" + output);
        }
        double p50 = Double.NaN;
        double p99 = Double.NaN;
        Matcher percentile = PERCENTILE.matcher(output);
        while (percentile.find()) {
            double value = Double.parseDouble(percentile.group(2));
            double millis = switch (percentile.group(3)) {
                case "us" -> value / 1000;
                case "s" -> value * 1000;
                default -> value;
            };
            if (percentile.group(1).equals("50")) {
                p50 = millis;
            }
            else {
                p99 = millis;
            }
        }
        Matcher non2xx = NON_2XX.matcher(output);
        Matcher errors = SOCKET_ERRORS.matcher(output);
        long socketErrors = 0;
        if (errors.find()) {
            for (int group = 1; group <= 4; group++) {
                socketErrors += Long.parseLong(errors.group(group));
            }
        }
        return new LoadResult(Double.parseDouble(rps.group(1)), p50, p99, Long.parseLong(requests.group(1)),
                non2xx.find() ? Long.parseLong(non2xx.group(1)) : 0, socketErrors);
    }

    private LoadResult java(String url, int connections, Duration duration, int keys) {
        LoopResources loops = LoopResources.create("bench-load", 1, true);
        ConnectionProvider pool = ConnectionProvider.builder("bench-load").maxConnections(connections).build();
        // A request unanswered for this long is counted as an error instead of stalling its loop for good.
        HttpClient client = HttpClient.create(pool).runOn(loops).responseTimeout(RESPONSE_TIMEOUT);
        List<Long> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicLong nonOk = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long end = System.nanoTime() + duration.toNanos();
        long start = System.nanoTime();
        try {
            Flux.range(0, connections).flatMap(loop -> Mono.defer(() -> {
                long sent = System.nanoTime();
                String key = keys > 1 ? "client-" + (1 + ThreadLocalRandom.current().nextInt(keys)) : "deny-client";
                return client.headers(headers -> headers.set("X-API-Key", key)).get().uri(url)
                        .responseSingle((response, body) -> body.then(Mono.just(response.status().code())))
                        .doOnNext(status -> {
                            latencies.add(System.nanoTime() - sent);
                            if (status != 200) {
                                nonOk.incrementAndGet();
                            }
                        })
                        .onErrorResume(error -> {
                            if (failed.incrementAndGet() <= 3) {
                                System.out.println("closed loop: " + url + " (key " + key + ") failed after "
                                        + (System.nanoTime() - sent) / 1_000_000 + " ms: " + error);
                            }
                            return Mono.empty();
                        });
            }).repeat(() -> System.nanoTime() < end), connections).blockLast(duration.plusSeconds(30));
        }
        finally {
            pool.disposeLater().block(Duration.ofSeconds(5));
            loops.disposeLater().block(Duration.ofSeconds(5));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        List<Long> sorted = latencies.stream().sorted().toList();
        return new LoadResult(sorted.size() / seconds, percentile(sorted, 0.50), percentile(sorted, 0.99),
                sorted.size(), nonOk.get(), failed.get());
    }

    static double percentile(List<Long> sortedNanos, double percentile) {
        if (sortedNanos.isEmpty()) {
            return Double.NaN;
        }
        int index = (int) Math.min(sortedNanos.size() - 1, Math.max(0, Math.ceil(sortedNanos.size() * percentile) - 1));
        return sortedNanos.get(index) / 1e6;
    }
}

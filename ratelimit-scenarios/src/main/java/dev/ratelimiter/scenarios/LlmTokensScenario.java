package dev.ratelimiter.scenarios;

import java.awt.Color;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimiter.scenarios.Report.Check;
import dev.ratelimiter.scenarios.Report.Result;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * LLM tokens charged from the response: clients of their own API key call the sample's {@code /v1/chat/completions}
 * route (rule {@code llm-tokens}: 10,000 tokens a minute per key, charged each answer's {@code usage.total_tokens},
 * 100 up front) far faster than their tokens refill, each answer reporting 500 to 2,500 tokens (JSON for some clients,
 * server-sent events for the others). Each client's tokens charged (the usage of its admitted answers) must stay within
 * the capacity plus what refilled during the run plus the documented overshoot: the answer in progress when the
 * bucket ran dry, and one more admitted while that answer's charge was on its way to Redis — two answers' worth.
 */
final class LlmTokensScenario {

    static final String NAME = "llm-tokens";
    static final long CAPACITY = 10_000;
    static final double REFILL_PER_SECOND = 10_000 / 60.0;
    static final int MINIMUM = 100;
    static final int MIN_USAGE = 500;
    static final int MAX_USAGE = 2_500;
    private static final int CLIENTS = 3;
    private static final Duration PACE = Duration.ofMillis(20);

    private LlmTokensScenario() {
    }

    /** The stub's answer: the usage the client asked for ({@code X-Scenario-Tokens}), as JSON or as events. */
    static Mono<Void> answer(HttpServerRequest request, HttpServerResponse response) {
        String tokens = request.requestHeaders().get("X-Scenario-Tokens", "0");
        String usage = "{\"prompt_tokens\":1,\"completion_tokens\":" + tokens + ",\"total_tokens\":" + tokens + "}";
        Mono<Void> drained = request.receive().then();
        if ("true".equals(request.requestHeaders().get("X-Scenario-Stream"))) {
            return drained.then(response.header("Content-Type", "text/event-stream").sendString(reactor.core.publisher
                    .Flux.just("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}],\"usage\":null}\n\n",
                            "data: {\"choices\":[],\"usage\":" + usage + "}\n\n", "data: [DONE]\n\n"),
                    StandardCharsets.UTF_8).then());
        }
        return drained.then(response.header("Content-Type", "application/json").sendString(Mono.just(
                "{\"choices\":[{\"message\":{\"content\":\"Hi\"}}],\"usage\":" + usage + "}"), StandardCharsets.UTF_8)
                .then());
    }

    /** What one client did: per second of the run, the tokens its admitted answers reported, and its refusals. */
    private record Client(String key, AtomicLongArray tokensPerSecond, long[] refused, long[] failed) {
    }

    static Result run(List<Integer> ports, int seconds, Path out) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long start = System.nanoTime();
        long end = start + Duration.ofSeconds(seconds).toNanos();
        List<Client> clients = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            Client client = new Client("llm-" + c + "-" + Long.toHexString(start & 0xffffff),
                    new AtomicLongArray(seconds + 2), new long[1], new long[1]);
            clients.add(client);
            boolean stream = c % 2 == 1;
            Random random = new Random(35 + c);
            Thread thread = new Thread(() -> play(http, ports, client, stream, random, start, end), "llm-client-" + c);
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            try {
                thread.join();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", ex);
            }
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        return report(clients, seconds, elapsed, out);
    }

    private static void play(HttpClient http, List<Integer> ports, Client client, boolean stream, Random random,
            long start, long end) {
        int sent = 0;
        while (System.nanoTime() < end) {
            int tokens = MIN_USAGE + random.nextInt(MAX_USAGE - MIN_USAGE + 1);
            int port = ports.get(sent++ % ports.size());
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/v1/chat/completions")).timeout(Duration.ofSeconds(10))
                    .header("X-API-Key", client.key()).header("Content-Type", "application/json")
                    .header("X-Scenario-Tokens", String.valueOf(tokens)).header("X-Scenario-Stream", String.valueOf(stream))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"scenario\",\"stream\":" + stream + "}"))
                    .build();
            try {
                HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                int second = (int) ((System.nanoTime() - start) / 1_000_000_000L);
                if (response.statusCode() == 200 && response.body().contains("\"total_tokens\":" + tokens)) {
                    client.tokensPerSecond().addAndGet(Math.min(second, client.tokensPerSecond().length() - 1), tokens);
                }
                else if (response.statusCode() == 429) {
                    client.refused()[0]++;
                }
                else {
                    client.failed()[0]++;
                }
            }
            catch (IOException ex) {
                client.failed()[0]++;
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
            LockSupport.parkNanos(PACE.toNanos());
        }
    }

    private static Result report(List<Client> clients, int seconds, double elapsed, Path out) {
        List<Check> checks = new ArrayList<>();
        double bound = CAPACITY + REFILL_PER_SECOND * elapsed + 2.0 * MAX_USAGE;
        for (Client client : clients) {
            long charged = 0;
            for (int s = 0; s < client.tokensPerSecond().length(); s++) {
                charged += client.tokensPerSecond().get(s);
            }
            checks.add(new Check(client.key() + ": tokens charged ≤ capacity + refill + two answers",
                    Report.f(charged), "≤ " + Report.f(bound) + " = 10,000 + 166.7/s × " + Report.f(elapsed)
                            + " s + 2 × " + MAX_USAGE, charged <= bound));
            checks.add(new Check(client.key() + ": its burst is admitted (nothing refused too early)",
                    Report.f(charged), "≥ capacity − minimum = " + (CAPACITY - MINIMUM), charged >= CAPACITY - MINIMUM));
            checks.add(new Check(client.key() + ": refused once its tokens ran out", client.refused()[0] + " refused",
                    "> 0", client.refused()[0] > 0));
            checks.add(new Check(client.key() + ": no failed request", client.failed()[0] + " failed", "0",
                    client.failed()[0] == 0));
        }
        Path[] files = chart(clients, seconds, out);
        return new Result(NAME, String.format(Locale.ROOT, "%d clients calling an LLM-like API through the gateways "
                + "for %d s, each answer charged the tokens it reports (limit 10,000 a minute per key)",
                clients.size(), seconds), checks, files[0], files[1]);
    }

    /** {@code llm-tokens.csv} and {@code .png}: tokens charged per second, all clients, against the refill limit. */
    private static Path[] chart(List<Client> clients, int seconds, Path out) {
        try {
            Files.createDirectories(out);
            Path csv = out.resolve(NAME + ".csv");
            List<String> lines = new ArrayList<>();
            lines.add("second,tokens_charged,limit_per_second");
            XYSeries charged = new XYSeries("tokens charged/s (" + clients.size() + " clients)");
            XYSeries limit = new XYSeries("refill limit/s (" + clients.size() + " × 166.7)");
            for (int s = 0; s < seconds; s++) {
                long total = 0;
                for (Client client : clients) {
                    total += client.tokensPerSecond().get(s);
                }
                double refill = clients.size() * REFILL_PER_SECOND;
                lines.add(s + "," + total + "," + Report.f(refill));
                charged.add(s, total);
                limit.add(s, refill);
            }
            Files.write(csv, lines);
            XYSeriesCollection data = new XYSeriesCollection();
            data.addSeries(charged);
            data.addSeries(limit);
            Path png = out.resolve(NAME + ".png");
            Report.lineChart(png, NAME + ": the first second spends each key's burst of 10,000, then the refill",
                    "tokens per second", data, new Color[] {new Color(0x2E7D32), new Color(0xC62828)}, 1);
            return new Path[] {csv, png};
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}

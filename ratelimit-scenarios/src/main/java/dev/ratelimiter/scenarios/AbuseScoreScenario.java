package dev.ratelimiter.scenarios;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.ratelimiter.scenarios.Report.Check;
import dev.ratelimiter.scenarios.Report.Result;
import dev.ratelimiter.testsupport.RedisServer;

/**
 * Limits that follow an abuse score: one sample-gateway, an abusive client at 4 × its limit's rate and a normal one
 * well under it, both on the same tier (a bucket of {@value #CAPACITY}, {@value #RATE} back a second). At second
 * {@value #SCORE_AT} an operator's system lowers the abusive client's limits through the rules API (score 1: factor
 * {@value #MIN_FACTOR}); the lowering halves every {@value #HALF_LIFE_SECONDS} s. The abusive client's admitted rate
 * must fall after the score lands and come back after the decay; the normal client is never refused.
 *
 * <p>The score is pushed by hand rather than computed by the usage rollup: the rollup's scoring (Kafka Streams over a
 * broker, a window of event time) is what {@code AbuseScoresEndToEndTest} in ratelimit-usage-rollup plays end to end;
 * here it would add a broker and a minute of windowing for the same lowering.
 */
final class AbuseScoreScenario {

    /** The client id in a usage answer (the identity it read). */
    private static final Pattern CLIENT = Pattern.compile("\"client\"\\s*:\\s*\"([A-Za-z0-9_-]+)\"");

    static final String NAME = "abuse-score";
    static final String ABUSIVE = "abuse-abusive-client";
    static final String NORMAL = "abuse-normal-client";
    static final int CAPACITY = 10;
    static final int RATE = 5;
    static final double ABUSIVE_RATE = 20;
    static final double NORMAL_RATE = 3;
    static final double MIN_FACTOR = 0.1;
    static final int HALF_LIFE_SECONDS = 6;
    /**
     * The seconds after the score's arrival its effect is measured over: the lowering is still at least 0.6 of score
     * 1's (factor at most 0.46, so at most 3 of the 5 tokens a second come back; 2 a second measured there).
     */
    static final int LOWERED_SECONDS = 3;
    static final int SCORE_AT = 8;
    static final int SECONDS = 30;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    Result run(Path jar, RedisServer redis, Upstream upstream, Path out) {
        if (!redis.isRunning()) {
            redis.restart();
        }
        try (Gateways gateway = new Gateways(jar, List.of(NAME), (i, port, management) -> arguments(port,
                management, redis.url(), upstream.uri()), out.resolve("logs"))) {
            System.out.printf(Locale.ROOT, "%s: gateway ready in %.1f s%n", NAME, gateway.startupSeconds());
            Series abusive = new Series(SECONDS);
            Series normal = new Series(SECONDS);
            long start = System.nanoTime();
            Thread abusiveSender = sender(gateway.ports().get(0), ABUSIVE, ABUSIVE_RATE, start, abusive);
            Thread normalSender = sender(gateway.ports().get(0), NORMAL, NORMAL_RATE, start, normal);
            Pause.millis(Math.max(0, SCORE_AT * 1000L - (System.nanoTime() - start) / 1_000_000));
            int scored = putScore(gateway.managementPort(0), clientIdOf(gateway.managementPort(0), ABUSIVE));
            join(abusiveSender);
            join(normalSender);
            Path csv = writeCsv(out.resolve(NAME + ".csv"), abusive, normal);
            Path png = new AbuseScoreChart(abusive, normal, SCORE_AT, CAPACITY, RATE).writePng(out.resolve(NAME
                    + ".png"));
            return new Result(NAME, description(), checks(scored, abusive, normal), csv, png);
        }
    }

    static List<String> arguments(int port, int management, String redisUrl, String upstreamUri) {
        List<String> args = GatewayArguments.processArguments(port, management, redisUrl, upstreamUri);
        args.addAll(List.of("--ratelimit.store.type=redis", "--ratelimit.store.key-prefix=rl-abuse",
                "--ratelimit.store.timeout=100ms", "--ratelimit.api-key.unknown.policy=default-tier",
                "--ratelimit.tiers.free.limits.default.capacity=" + CAPACITY,
                "--ratelimit.tiers.free.limits.default.refill-tokens=" + RATE,
                "--ratelimit.tiers.free.limits.default.refill-period=1s",
                "--ratelimit.rules.free-hourly.enabled=false", "--ratelimit.shedding.enabled=false",
                "--ratelimit.abuse.enabled=true", "--ratelimit.abuse.min-factor=" + MIN_FACTOR,
                "--ratelimit.abuse.half-life=" + HALF_LIFE_SECONDS + "s",
                // the rules API only: no broker in this scenario
                "--ratelimit.abuse.kafka.bootstrap-servers=", "--spring.kafka.bootstrap-servers="));
        return args;
    }

    List<Check> checks(int scored, Series abusive, Series normal) {
        double before = abusive.admittedPerSecond(2, SCORE_AT);
        double lowered = abusive.admittedPerSecond(SCORE_AT + 1, SCORE_AT + 1 + LOWERED_SECONDS);
        double after = abusive.admittedPerSecond(SECONDS - 6, SECONDS);
        List<Check> checks = new ArrayList<>();
        checks.add(new Check("the operator's score is taken (PUT _abuse-scores)", "HTTP " + scored, "200",
                scored == 200));
        checks.add(new Check("abusive client's admitted rate falls after the score lands",
                Report.f(lowered) + "/s in seconds " + (SCORE_AT + 1) + "-" + (SCORE_AT + LOWERED_SECONDS) + " against "
                        + Report.f(before) + "/s before", "at most 60 %", lowered <= 0.6 * before));
        checks.add(new Check("abusive client's admitted rate comes back after the decay",
                Report.f(after) + "/s in the last 6 s against " + Report.f(before) + "/s before", "at least 80 %",
                after >= 0.8 * before));
        checks.add(new Check("the normal client of the same tier is never refused", normal.refused() + " refused of "
                + normal.sent(), "0", normal.refused() == 0 && normal.sent() > 0));
        checks.add(new Check("no answer but 200 or 429", (abusive.other() + normal.other()) + " others", "0",
                abusive.other() + normal.other() == 0));
        return checks;
    }

    private String description() {
        return String.format(Locale.ROOT, "an abusive client at %s/s and a normal one at %s/s on one tier (a bucket of "
                + "%d, %d/s back); at second %d an operator pushes score 1 (factor %s, half-life %d s) through the "
                + "rules API; %d s on one sample-gateway", Report.f(ABUSIVE_RATE), Report.f(NORMAL_RATE), CAPACITY,
                RATE, SCORE_AT, Report.f(MIN_FACTOR), HALF_LIFE_SECONDS, SECONDS);
    }

    /** Requests at {@code rate} a second, each second's answers counted in {@code series}, until the last second. */
    private Thread sender(int port, String key, double rate, long start, Series series) {
        Thread thread = new Thread(() -> {
            long intervalNanos = (long) (1e9 / rate);
            for (long next = start; next - start < SECONDS * 1_000_000_000L; next += intervalNanos) {
                Pause.millis(Math.max(0, (next - System.nanoTime()) / 1_000_000));
                int second = (int) ((System.nanoTime() - start) / 1_000_000_000L);
                if (second >= SECONDS) {
                    break;
                }
                series.count(second, status(port, key));
            }
        }, "abuse-" + key);
        thread.start();
        return thread;
    }

    private int status(int port, String key) {
        return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/hello"))
                .header("X-API-Key", key).timeout(Duration.ofSeconds(5)).build());
    }

    private int putScore(int management, String client) {
        return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management + "/v1/rules/_abuse-scores/"
                + client)).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString("{\"score\":1,\"source\":\"scenario\"}")).build());
    }

    /** The answer's status, or -1 when none came: counted as neither 200 nor 429. */
    private int send(HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        }
        catch (java.io.IOException ex) {
            return -1;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /**
     * The client id the gateway names the key by, read from its usage API (a read that spends and makes nothing):
     * scores name clients by the id, an HMAC under the gateway's client-id secret, which only the gateway knows.
     * (Computed here as the unkeyed SHA-256 it was, the score named no client once the sample set a demo secret, and
     * the abusive client's rate never fell.)
     */
    private String clientIdOf(int management, String apiKey) {
        try {
            String usage = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management
                    + "/v1/usage?apiKey=" + apiKey)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            Matcher client = CLIENT.matcher(usage);
            if (!client.find()) {
                throw new IllegalStateException("the usage API named no client for the abusive key: " + usage);
            }
            return client.group(1);
        }
        catch (java.io.IOException ex) {
            throw new IllegalStateException("the usage API did not answer: " + ex, ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }

    private static void join(Thread thread) {
        try {
            thread.join(Duration.ofSeconds(SECONDS + 30).toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static Path writeCsv(Path file, Series abusive, Series normal) {
        StringBuilder csv = new StringBuilder("second,abusive_sent,abusive_admitted,normal_sent,normal_admitted\n");
        for (int s = 0; s < SECONDS; s++) {
            csv.append(s).append(',').append(abusive.sent.get(s)).append(',').append(abusive.admitted.get(s))
                    .append(',').append(normal.sent.get(s)).append(',').append(normal.admitted.get(s)).append('\n');
        }
        try {
            Files.createDirectories(file.getParent());
            return Files.writeString(file, csv);
        }
        catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    /** One client's answers per second. */
    static final class Series {

        final AtomicIntegerArray sent;
        final AtomicIntegerArray admitted;
        final AtomicIntegerArray others;

        Series(int seconds) {
            sent = new AtomicIntegerArray(seconds);
            admitted = new AtomicIntegerArray(seconds);
            others = new AtomicIntegerArray(seconds);
        }

        void count(int second, int status) {
            sent.incrementAndGet(second);
            if (status == 200) {
                admitted.incrementAndGet(second);
            }
            else if (status != 429) {
                others.incrementAndGet(second);
            }
        }

        double admittedPerSecond(int from, int to) {
            int total = 0;
            for (int s = from; s < to; s++) {
                total += admitted.get(s);
            }
            return total / (double) (to - from);
        }

        int sent() {
            return sum(sent);
        }

        int refused() {
            return sum(sent) - sum(admitted);
        }

        int other() {
            return sum(others);
        }

        int seconds() {
            return sent.length();
        }

        private static int sum(AtomicIntegerArray values) {
            int total = 0;
            for (int i = 0; i < values.length(); i++) {
                total += values.get(i);
            }
            return total;
        }
    }
}

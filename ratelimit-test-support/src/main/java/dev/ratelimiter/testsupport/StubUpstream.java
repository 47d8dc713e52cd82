package dev.ratelimiter.testsupport;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.channel.EventLoop;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;

/**
 * A real HTTP server standing in for the API behind the gateway. It answers every request with 200 and a
 * small JSON body (after an optional delay) and counts what reached it, per path and per API key, so tests
 * can assert what the upstream saw — including how many requests it had in progress at once.
 *
 * <p>A path starting with {@code /stream} is answered as a slow stream: ten chunks, one per delay tenth, so that a
 * client can go away in the middle of a response.
 */
public final class StubUpstream implements AutoCloseable {

    private final LoopResources loops;
    private final DisposableServer server;
    private final AtomicLong hits = new AtomicLong();
    private final Map<String, AtomicLong> hitsByPath = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> hitsByApiKey = new ConcurrentHashMap<>();
    private final Map<String, InFlight> inFlightByApiKey = new ConcurrentHashMap<>();
    private final InFlight inFlight = new InFlight();
    private volatile Duration delay = Duration.ZERO;
    private final Map<EventLoop, Scheduler> timersByLoop = new ConcurrentHashMap<>();

    private StubUpstream() {
        // Its own event loops: an application context started later may reset Reactor Netty's global resources.
        this.loops = LoopResources.create("stub-upstream", 2, true);
        this.server = HttpServer.create()
                .runOn(loops)
                .host("127.0.0.1")
                .port(0)
                .handle((request, response) -> {
                    hits.incrementAndGet();
                    hitsByPath.computeIfAbsent(request.fullPath(), p -> new AtomicLong()).incrementAndGet();
                    String apiKey = request.requestHeaders().get("X-API-Key");
                    InFlight client = apiKey == null ? null
                            : inFlightByApiKey.computeIfAbsent(apiKey, k -> new InFlight());
                    if (apiKey != null) {
                        hitsByApiKey.computeIfAbsent(apiKey, k -> new AtomicLong()).incrementAndGet();
                        client.enter();
                    }
                    inFlight.enter();
                    Duration wait = delay;
                    Scheduler timers = timersOf(response);
                    Mono<Void> answer;
                    if (request.fullPath().startsWith("/stream")) {
                        Duration tick = wait.isZero() ? Duration.ofMillis(10) : wait.dividedBy(10);
                        answer = response.header("Content-Type", "text/plain")
                                .sendString(Flux.interval(tick, timers).take(10).map(i -> "chunk " + i + "\n")).then();
                    }
                    else {
                        byte[] body = "{\"upstream\":\"stub\"}".getBytes(StandardCharsets.UTF_8);
                        answer = response.header("Content-Type", "application/json")
                                .sendByteArray(Mono.just(body)).then();
                        answer = wait.isZero() ? answer : Mono.delay(wait, timers).then(answer);
                    }
                    return answer.doFinally(signal -> {
                        inFlight.leave();
                        if (client != null) {
                            client.leave();
                        }
                    });
                })
                .bindNow(Duration.ofSeconds(10));
    }

    /**
     * Timers on the connection's own event loop. On Reactor's parallel scheduler, a timer cancelled from the event
     * loop (the client went away) takes that scheduler's queue lock there: a blocking call on a non-blocking thread,
     * which BlockHound rightly fails the test for.
     */
    private Scheduler timersOf(HttpServerResponse response) {
        EventLoop[] loop = new EventLoop[1];
        response.withConnection(connection -> loop[0] = connection.channel().eventLoop());
        return loop[0] == null ? Schedulers.parallel()
                : timersByLoop.computeIfAbsent(loop[0], Schedulers::fromExecutorService);
    }

    /** Starts a stub on a free loopback port. */
    public static StubUpstream start() {
        return new StubUpstream();
    }

    public int port() {
        return server.port();
    }

    /** Base URI to route to, e.g. {@code http://127.0.0.1:40123}. */
    public String uri() {
        return "http://127.0.0.1:" + port();
    }

    /** Requests that reached the upstream since start or {@link #reset()}. */
    public long hits() {
        return hits.get();
    }

    public long hits(String path) {
        AtomicLong count = hitsByPath.get(path);
        return count == null ? 0 : count.get();
    }

    public long hitsForApiKey(String apiKey) {
        AtomicLong count = hitsByApiKey.get(apiKey);
        return count == null ? 0 : count.get();
    }

    /** Requests in progress here right now. */
    public int inFlight() {
        return inFlight.now.get();
    }

    /** The most requests in progress here at once since start or {@link #reset()}. */
    public int maxInFlight() {
        return inFlight.max.get();
    }

    /** The most requests of one API key in progress here at once since start or {@link #reset()}. */
    public int maxInFlight(String apiKey) {
        InFlight client = inFlightByApiKey.get(apiKey);
        return client == null ? 0 : client.max.get();
    }

    /** Makes every later answer wait this long (a slow upstream). */
    public void delay(Duration delay) {
        this.delay = delay;
    }

    public void reset() {
        hits.set(0);
        hitsByPath.clear();
        hitsByApiKey.clear();
        inFlightByApiKey.clear();
        inFlight.max.set(inFlight.now.get());
        delay = Duration.ZERO;
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(5));
        loops.disposeLater().block(Duration.ofSeconds(5));
    }

    /** Requests in progress, and the most seen at once. */
    private static final class InFlight {

        final AtomicInteger now = new AtomicInteger();
        final AtomicInteger max = new AtomicInteger();

        void enter() {
            max.accumulateAndGet(now.incrementAndGet(), Math::max);
        }

        void leave() {
            now.decrementAndGet();
        }
    }
}

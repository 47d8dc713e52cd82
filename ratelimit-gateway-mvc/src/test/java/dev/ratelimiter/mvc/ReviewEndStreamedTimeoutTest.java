package dev.ratelimiter.mvc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions;
import org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions;
import org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.servlet.function.HandlerFilterFunction;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Review of feed21a (review-end): "the call still counts until it returns" counts the upstream call until
 * {@code ProxyExchange.exchange} returns - but Gateway Server MVC's exchange returns as soon as the upstream's status
 * and headers are in; the body is read later, when the ServerResponse is written. Behind
 * {@code ServerResponse.async(future, timeout)}, when the headers come after the timeout answered the client, that
 * ServerResponse is never written: the upstream response is neither read nor closed, and the upstream goes on sending
 * its body, uncounted (the permit and ticket went back as exchange() returned).
 *
 * <p>The upstream sends its headers after 1.5 s, then 10 chunks over 3 s; the timeout is 100 ms. One client, a
 * concurrency rule of 2.
 */
@DirtiesContext
@SpringBootTest(classes = { TestMvcGatewayApplication.class, ReviewEndStreamedTimeoutTest.Routes.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ReviewEndStreamedTimeoutTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = new MvcGatewayFixture();
    static final StubUpstream upstream = fixture.upstream();
    static final ExecutorService workers = Executors.newCachedThreadPool();
    /** An upstream whose headers come after 1.5 s, then its body over 3 s: in progress until the last byte. */
    static final SlowHeadersUpstream slow = SlowHeadersUpstream.start();

    /** Headers after {@code HEADERS_AFTER}, then 10 chunks 300 ms apart; counts the calls in progress at once. */
    static final class SlowHeadersUpstream {

        static final Duration HEADERS_AFTER = Duration.ofMillis(1500);
        final com.sun.net.httpserver.HttpServer server;
        final java.util.concurrent.atomic.AtomicInteger now = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger max = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger hits = new java.util.concurrent.atomic.AtomicInteger();

        private SlowHeadersUpstream(com.sun.net.httpserver.HttpServer server) {
            this.server = server;
        }

        static SlowHeadersUpstream start() {
            try {
                com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer
                        .create(new java.net.InetSocketAddress("127.0.0.1", 0), 50);
                SlowHeadersUpstream upstream = new SlowHeadersUpstream(server);
                server.setExecutor(Executors.newCachedThreadPool());
                server.createContext("/", exchange -> {
                    upstream.hits.incrementAndGet();
                    upstream.max.accumulateAndGet(upstream.now.incrementAndGet(), Math::max);
                    try (exchange) {
                        Thread.sleep(HEADERS_AFTER.toMillis());
                        exchange.getResponseHeaders().add("Content-Type", "text/plain");
                        exchange.sendResponseHeaders(200, 0);
                        for (int i = 0; i < 10; i++) {
                            exchange.getResponseBody().write(("chunk " + i + "\n").getBytes());
                            exchange.getResponseBody().flush();
                            Thread.sleep(300);
                        }
                    }
                    catch (InterruptedException | java.io.IOException ex) {
                        // the gateway went away
                    }
                    finally {
                        upstream.now.decrementAndGet();
                    }
                });
                server.start();
                return upstream;
            }
            catch (java.io.IOException ex) {
                throw new java.io.UncheckedIOException(ex);
            }
        }

        String uri() {
            return "http://127.0.0.1:" + server.getAddress().getPort();
        }
    }

    @TestConfiguration(proxyBeanMethods = false)
    static class Routes {

        /** A streaming upstream behind a timeout filter. */
        @Bean
        RouterFunction<ServerResponse> streamedTimed() {
            HandlerFilterFunction<ServerResponse, ServerResponse> async = (request, next) -> ServerResponse
                    .async(CompletableFuture.supplyAsync(() -> {
                        try {
                            return next.handle(request);
                        }
                        catch (Exception ex) {
                            throw new CompletionException(ex);
                        }
                    }, workers), Duration.ofMillis(100));
            return GatewayRouterFunctions.route("streamtimed").GET("/streamtimed/**", HandlerFunctions.http())
                    .before(BeforeFilterFunctions.uri(slow.uri())).build().filter(async);
        }

        /** The same upstream, no timeout filter: the body is copied on the servlet thread (control). */
        @Bean
        RouterFunction<ServerResponse> streamedSync() {
            return GatewayRouterFunctions.route("streamsync").GET("/streamsync/**", HandlerFunctions.http())
                    .before(BeforeFilterFunctions.uri(upstream.uri())).build();
        }
    }

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "100000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "100000");
        registry.add("ratelimit.rules.in-progress.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.in-progress.max-in-progress", () -> "2");
        registry.add("ratelimit.rules.in-progress.match.route-ids[0]", () -> "streamtimed");
        registry.add("ratelimit.rules.in-progress.match.route-ids[1]", () -> "streamsync");
    }

    @AfterEach
    void upstreamIdle() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (upstream.inFlight() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }

    /**
     * Each request is answered 503 at its timeout (100 ms; Tomcat checks async timeouts about once a second, so by
     * 1.1 s); its upstream call's exchange() returns at 1.5 s (headers), the permit goes back then, and the upstream
     * streams its body for 3 s more to a response nobody reads or closes.
     */
    @Test
    void aStreamedUpstreamResponseThatOutlivesTheTimeoutStillCounts() throws Exception {
        Http http = new Http(port);
        List<Integer> statuses = new ArrayList<>();
        long until = System.nanoTime() + Duration.ofMillis(5000).toNanos();
        while (System.nanoTime() < until) {
            statuses.add(http.get("/streamtimed/x", "stream-client").statusCode());
            Thread.sleep(50);
        }
        assertThat(slow.max.get())
                .as("calls of one 2-at-once client in progress at the upstream at once (%s)", statuses)
                .isLessThanOrEqualTo(2);
    }

    /** Control: without a timeout filter the body is copied while the servlet has the request, and counts. */
    @Test
    void aStreamedUpstreamResponseCopiedByTheServletCounts() throws Exception {
        upstream.delay(Duration.ofSeconds(2));
        Http http = new Http(port);
        List<CompletableFuture<java.net.http.HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            answers.add(http.getLater("/streamsync/x", "sync-client"));
            Thread.sleep(100);
        }
        List<Integer> statuses = answers.stream().map(answer -> answer.join().statusCode()).toList();
        assertThat(upstream.maxInFlight("sync-client")).as("(%s)", statuses).isLessThanOrEqualTo(2);
        assertThat(statuses).contains(200, 429);
    }
}

package dev.ratelimiter.mvc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.testsupport.StubUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
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
 * When a request is over for the limiter, on real Tomcat and Redis: not before its upstream call has returned (a
 * timeout that answers the client does not end the call it started), never twice (the error page of an admitted
 * request is not charged again), and work that outlives it (async work starting after its timeout) reaches no
 * upstream. Found by the final attack review of the MVC flavour: behind {@code ServerResponse.async(future, timeout)}
 * permits and tickets went back at the timeout while the worker's call went on (6 calls of a 2-at-once client at the
 * upstream; the shedder's gauge at 0 with 5 in flight), and an admitted request whose upstream failed was answered
 * 429 by its own error page (see ComposedRoutesIntegrationTest). No route here takes the error page: the timeouts'
 * 503 is the container's own.
 */
@DirtiesContext
@SpringBootTest(classes = { TestMvcGatewayApplication.class, MvcRequestEndIntegrationTest.Routes.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcRequestEndIntegrationTest {

    private static final Duration UPSTREAM_DELAY = Duration.ofSeconds(3);

    @RegisterExtension
    static final MvcGatewayFixture fixture = new MvcGatewayFixture();
    static final StubUpstream upstream = fixture.upstream();
    static final ExecutorService workers = Executors.newCachedThreadPool();
    /** What the late route's async work ended with, one entry per request. */
    static final List<Throwable> lateOutcomes = new CopyOnWriteArrayList<>();
    static final AtomicInteger lateFinished = new AtomicInteger();

    @TestConfiguration(proxyBeanMethods = false)
    static class Routes {

        /** A gateway route behind a timeout filter: ServerResponse.async with a timeout, the work on a pool. */
        @Bean
        RouterFunction<ServerResponse> timed() {
            return timedOut("timed", "/timed/**", Duration.ZERO, Duration.ofMillis(300));
        }

        /** The same on a route whose upstream has a load shedder. */
        @Bean
        RouterFunction<ServerResponse> shedded() {
            return timedOut("shedded", "/shedded/**", Duration.ZERO, Duration.ofMillis(300));
        }

        /** The same, its work starting well after the timeout answered the client (a busy pool). */
        @Bean
        RouterFunction<ServerResponse> late() {
            return timedOut("late", "/late/**", Duration.ofMillis(2500), Duration.ofMillis(100));
        }

        /**
         * Tomcat discards a request's facade when the request is over, which on its own fails late work that reads
         * the request (a recycled facade throws); with facades kept (a connector setting), only the limiter stands
         * between such work and the upstream, and that is what is tested here.
         */
        @Bean
        WebServerFactoryCustomizer<TomcatServletWebServerFactory> keepFacades() {
            return factory -> factory.addConnectorCustomizers(connector -> connector.setDiscardFacades(false));
        }

        private static RouterFunction<ServerResponse> timedOut(String id, String path, Duration startAfter,
                Duration timeout) {
            HandlerFilterFunction<ServerResponse, ServerResponse> async = (request, next) -> ServerResponse
                    .async(CompletableFuture.supplyAsync(() -> {
                        Throwable outcome = null;
                        try {
                            Thread.sleep(startAfter.toMillis());
                            return next.handle(request);
                        }
                        catch (Exception ex) {
                            outcome = ex;
                            throw new CompletionException(ex);
                        }
                        finally {
                            if (id.equals("late")) {
                                lateOutcomes.add(outcome == null ? new AssertionError("ran") : outcome);
                                lateFinished.incrementAndGet();
                            }
                        }
                    }, workers), timeout);
            return GatewayRouterFunctions.route(id).GET(path, HandlerFunctions.http())
                    .before(BeforeFilterFunctions.uri(upstream.uri())).build().filter(async);
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "100000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "100000");
        // at most 2 requests of one client in progress on the timed route
        registry.add("ratelimit.rules.in-progress.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.in-progress.max-in-progress", () -> "2");
        registry.add("ratelimit.rules.in-progress.match.route-ids[0]", () -> "timed");
        registry.add("ratelimit.shedding.upstreams.slowone.route-ids[0]", () -> "shedded");
        registry.add("ratelimit.shedding.upstreams.slowone.max-in-flight", () -> "2");
    }


    /**
     * A concurrency rule promises at most 2 of a client's requests in progress at the upstream. Each request times
     * out at 300 ms (the client gets 503) while its call waits 3 s at the upstream: the permit is held until that
     * call returns, so the third request on is refused, and the upstream never has more than 2 at once.
     */
    @Test
    void aTimeoutThatAnswersTheClientDoesNotGiveBackTheConcurrencyPermitOfTheCallStillInProgress() throws Exception {
        upstream.delay(UPSTREAM_DELAY);
        Http http = new Http(port);
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            statuses.add(http.get("/timed/x", "slow-client").statusCode());
        }
        assertThat(upstream.maxInFlight("slow-client")).as("calls of one client at the upstream at once (%s)",
                statuses).isEqualTo(2);
        assertThat(statuses).as("answers").startsWith(503, 503).contains(429);
    }

    /**
     * Load shedding promises at most 2 requests in flight at the upstream, and its gauge says how many there are:
     * with every request timing out at 300 ms while its call goes on, both hold while the calls are in progress.
     */
    @Test
    void aTimeoutDoesNotGiveBackTheLoadSheddingTicketOfTheCallStillInProgress() throws Exception {
        upstream.delay(UPSTREAM_DELAY);
        Http http = new Http(port);
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            statuses.add(http.get("/shedded/x", "shed-" + i).statusCode());
        }
        double gauge = meters.get("ratelimit.upstream.in.flight").tag("upstream", "slowone").gauge().value();
        assertThat(upstream.maxInFlight()).as("calls at the upstream at once (%s)", statuses).isEqualTo(2);
        assertThat(gauge).as("the shedder's in-flight gauge while 2 calls are at the upstream").isEqualTo(2.0);
        assertThat(upstream.hits("/shedded/x")).isEqualTo(2);
    }

    /**
     * Async work that starts after the timeout answered the client (2.5 s against 100 ms) names its route on a
     * request that is over: it is neither decided nor let through, and its upstream call is not made.
     */
    @Test
    void asyncWorkStartingAfterItsRequestIsOverReachesNoUpstream() throws Exception {
        lateOutcomes.clear();
        lateFinished.set(0);
        Http http = new Http(port);
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            statuses.add(http.get("/late/x", "late-" + i).statusCode());
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (lateFinished.get() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(statuses).as("answered by the timeout").containsOnly(503);
        assertThat(lateOutcomes).as("what the late work ended with").hasSize(3)
                .allSatisfy(outcome -> assertThat(outcome).isInstanceOf(LimitedRequest.RequestOverException.class));
        assertThat(upstream.hits("/late/x")).isZero();
    }
}

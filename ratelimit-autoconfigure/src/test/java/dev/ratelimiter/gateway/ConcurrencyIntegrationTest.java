package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.redis.RedisRateLimitStore;
import dev.ratelimiter.testsupport.PermitsInRedis;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrency limits through the whole gateway against a real Redis: a slow endpoint holds one client to its permits
 * while another client's requests get through, and requests the client cancels — before the response or in the
 * middle of it — give every permit back.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ConcurrencyIntegrationTest {

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.cleanBeforeEachOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    @LocalServerPort
    int port;

    @Autowired
    RateLimitStore store;

    WebClient client;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("ratelimit.store.type", () -> "redis");
        registry.add("ratelimit.store.timeout", () -> "2s");
        fixture.route(registry, 0, "report", "/report/**");
        fixture.route(registry, 1, "held", "/held/**");
        fixture.route(registry, 2, "stream", "/stream/**");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "100000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "100000");
        // The report route: 4 in progress per client, and 12 for the route as a whole.
        registry.add("ratelimit.rules.report-per-client.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.report-per-client.max-in-progress", () -> "4");
        registry.add("ratelimit.rules.report-per-client.match.route-ids[0]", () -> "report");
        registry.add("ratelimit.rules.report-route.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.report-route.max-in-progress", () -> "12");
        registry.add("ratelimit.rules.report-route.key[0]", () -> "route");
        registry.add("ratelimit.rules.report-route.match.route-ids[0]", () -> "report");
        // Roomy caps on the routes whose requests the client cancels: every request takes a permit.
        registry.add("ratelimit.rules.in-progress.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.in-progress.max-in-progress", () -> "1000");
        registry.add("ratelimit.rules.in-progress.match.route-ids[0]", () -> "held");
        registry.add("ratelimit.rules.in-progress.match.route-ids[1]", () -> "stream");
    }

    @BeforeEach
    void reset() {
        client = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
    }

    @Test
    void aSlowEndpointHoldsTheBusyClientToItsPermitsWhileAnotherClientGetsThrough() {
        upstream.delay(Duration.ofMillis(30));
        Map<String, List<Integer>> healthy = burst();
        assertThat(healthy.get("analyst")).containsOnly(200);

        upstream.reset();
        upstream.delay(Duration.ofMillis(210));
        Map<String, List<Integer>> slow = burst();

        assertThat(upstream.maxInFlight("reporter")).as("the busy client's requests in progress upstream")
                .isEqualTo(4);
        assertThat(slow.get("reporter")).contains(200, 429);
        assertThat(slow.get("analyst")).as("the other client's requests on the same route").hasSize(10)
                .containsOnly(200);
        assertThat(upstream.hitsForApiKey("reporter")).isEqualTo(slow.get("reporter").stream()
                .filter(status -> status == 200).count());

        HttpHeaders refused = denial("reporter");
        assertThat(refused.getFirst(RateLimitHeaders.LIMIT)).isEqualTo("4");
        assertThat(refused.getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
        assertThat(refused.getFirst(RateLimitHeaders.POLICY)).contains("\"report-per-client\";q=4")
                .contains("\"report-route\";q=12");
        awaitNoPermits();
        assertThat(PermitsInRedis.count(redis.server())).as("every permit given back once the responses completed: " + PermitsInRedis.dump(redis.server())).isZero();
    }

    @Test
    void requestsCancelledByTheClientBeforeOrDuringTheResponseLeaveNoPermitHeld() {
        upstream.delay(Duration.ofMillis(1000));
        AtomicInteger cancelledBeforeResponse = new AtomicInteger();
        AtomicInteger cancelledMidResponse = new AtomicInteger();
        Flux.range(0, 500)
                .flatMap(i -> client.get().uri("/held/" + i).header("X-API-Key", "canceller").retrieve()
                        .toBodilessEntity().timeout(Duration.ofMillis(400))
                        .onErrorResume(failure -> {
                            cancelledBeforeResponse.incrementAndGet();
                            return Mono.empty();
                        }), 50)
                .blockLast(Duration.ofSeconds(60));
        Flux.range(0, 500)
                .flatMap(i -> client.get().uri("/stream/" + i).header("X-API-Key", "canceller").retrieve()
                        .bodyToFlux(String.class).take(1).doOnComplete(cancelledMidResponse::incrementAndGet)
                        .onErrorResume(failure -> Mono.empty()), 100)
                .blockLast(Duration.ofSeconds(60));

        assertThat(cancelledBeforeResponse.get()).isEqualTo(500);
        assertThat(cancelledMidResponse.get()).as("a first chunk arrived, then the client went away").isEqualTo(500);
        // Most were cancelled while the upstream worked on them or wrote to them; some earlier (while being decided
        // or connecting) — every stage must give its permit back.
        // Every streamed request reached the upstream (a chunk came back); of the others, many were cancelled while
        // the upstream worked on them and some earlier, while being decided or connecting. Every stage must give its
        // permit back.
        long heldReachedUpstream = upstream.hits() - 500;
        assertThat(heldReachedUpstream).as("requests cancelled while the upstream worked on them").isPositive();
        awaitNoPermits();
        assertThat(upstream.inFlight()).isZero();
        assertThat(PermitsInRedis.count(redis.server())).as("permits held in Redis after 1,000 cancelled requests").isZero();
        assertThat(store.find(RedisRateLimitStore.class).orElseThrow().permits().held())
                .as("permits this instance still renews").isZero();
    }

    /** A busy client (16 at once) and a light one (2 at once) on the report route, together. */
    private Map<String, List<Integer>> burst() {
        Map<String, List<Integer>> statuses = new ConcurrentHashMap<>();
        Flux<Integer> reporter = Flux.range(0, 48).flatMap(i -> status("reporter", statuses), 16);
        Flux<Integer> analyst = Flux.range(0, 10).flatMap(i -> status("analyst", statuses), 2);
        Flux.merge(reporter, analyst).blockLast(Duration.ofSeconds(60));
        return statuses;
    }

    private Mono<Integer> status(String apiKey, Map<String, List<Integer>> statuses) {
        return client.get().uri("/report/run").header("X-API-Key", apiKey)
                .exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value()))
                .doOnNext(status -> statuses.computeIfAbsent(apiKey, k -> java.util.Collections
                        .synchronizedList(new ArrayList<>())).add(status));
    }

    /** Holds 4 slow requests of a client and returns the headers of its fifth, refused request. */
    private HttpHeaders denial(String apiKey) {
        upstream.reset();
        upstream.delay(Duration.ofSeconds(1));
        Flux<Integer> holding = Flux.range(0, 4).flatMap(i -> status(apiKey, new ConcurrentHashMap<>()), 4);
        var held = holding.subscribe();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (upstream.maxInFlight(apiKey) < 4 && System.nanoTime() < deadline) {
                Load.sleep(Duration.ofMillis(10));
            }
            return client.get().uri("/report/run").header("X-API-Key", apiKey)
                    .exchangeToMono(response -> {
                        assertThat(response.statusCode().value()).isEqualTo(429);
                        return response.releaseBody().thenReturn(response.headers().asHttpHeaders());
                    })
                    .block(Duration.ofSeconds(10));
        }
        finally {
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (!held.isDisposed() && System.nanoTime() < deadline) {
                Load.sleep(Duration.ofMillis(20));
            }
            Load.sleep(Duration.ofMillis(200));
        }
    }

    private static void awaitNoPermits() {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while ((PermitsInRedis.count(redis.server()) > 0 || upstream.inFlight() > 0) && System.nanoTime() < deadline) {
            Load.sleep(Duration.ofMillis(50));
        }
    }
}

package dev.ratelimiter.mvc;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.StoreBreaker;
import dev.ratelimiter.redis.RedisRateLimitStore;
import dev.ratelimiter.testsupport.LatencyProxy;
import dev.ratelimiter.testsupport.LoopbackPorts;
import dev.ratelimiter.testsupport.PermitsInRedis;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
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
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The MVC twin of the WebFlux permit storm: thousands of requests on Tomcat, each abandoned by its client at a random
 * moment (before the decision, while Redis decides, while the upstream works), on a route answered on the servlet
 * thread, one answered asynchronously on another thread, and one whose upstream refuses the connection, while the
 * network to Redis jitters around the store timeout (some decisions time out and land in Redis later, some come
 * from the fallback). Afterwards nothing may be held: no permit in Redis, none renewed by the gateway, and every
 * client can take its whole quota again.
 */
@DirtiesContext
@SpringBootTest(classes = { TestMvcGatewayApplication.class, MvcConcurrencyPermitStormTest.Routes.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcConcurrencyPermitStormTest {

    private static final int REQUESTS = 2_000;
    private static final int CLIENTS = 12;
    private static final int PER_CLIENT = 4;
    private static final long SEED = Long.getLong("ratelimit.test.seed", 20261204L);

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    static LatencyProxy network;

    @TestConfiguration(proxyBeanMethods = false)
    static class Routes {

        /** A gateway route whose filters and upstream call run on another thread than the servlet's. */
        @Bean
        RouterFunction<ServerResponse> asyncRoute() {
            return GatewayRouterFunctions.route("async").GET("/async/**", HandlerFunctions.http())
                    .before(BeforeFilterFunctions.uri(upstream.uri()))
                    .build()
                    .filter((request, next) -> ServerResponse.async(CompletableFuture.supplyAsync(() -> {
                        try {
                            return next.handle(request);
                        }
                        catch (Exception ex) {
                            throw new CompletionException(ex);
                        }
                    })));
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    RateLimitStore store;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        network = new LatencyProxy(redis.host(), redis.port(), Duration.ZERO);
        registry.add("spring.data.redis.url", network::url);
        registry.add("ratelimit.store.type", () -> "redis");
        // longer than the default, so that Redis decides a share of the storm on a busy 2-core machine; the
        // jitter's longest delays and the breaker they open still send the rest to the fallback
        registry.add("ratelimit.store.timeout", () -> "15ms");
        fixture.route(registry, 0, "slow", "/slow/**");
        MvcRoutes.route(registry, 1, "broken", "/broken/**", () -> "http://127.0.0.1:" + LoopbackPorts.refusing());
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.rules.per-client.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.per-client.max-in-progress", () -> String.valueOf(PER_CLIENT));
        registry.add("ratelimit.rules.per-route.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.per-route.key[0]", () -> "route");
        registry.add("ratelimit.rules.per-route.max-in-progress", () -> "30");
    }

    @AfterAll
    static void close() {
        network.close();
    }

    @Test
    void thousandsOfRequestsAbandonedAtRandomMomentsWhileRedisJittersLeaveNoPermitBehind() throws Exception {
        Random random = new Random(SEED);
        upstream.delay(Duration.ofMillis(20));
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        long typicalNanos = warmUp(client);
        Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();
        Semaphore outstanding = new Semaphore(16);
        List<CompletableFuture<?>> requests = new ArrayList<>(REQUESTS);
        try (LatencyProxy.Jitter jitter = network.jitter(new Random(random.nextLong()), 0, 0, 0, 0, 0, 0, 1, 3, 7,
                20)) {
            for (int i = 0; i < REQUESTS; i++) {
                String key = "client-" + random.nextInt(CLIENTS);
                int kind = random.nextInt(5);
                String path = (kind < 2 ? "/slow/" : kind < 4 ? "/async/" : "/broken/") + i;
                // up to six times a typical request, short waits more often than long ones
                Duration patience = Duration.ofNanos(
                        Math.max(100_000, (long) (Math.pow(random.nextDouble(), 1.5) * 6 * typicalNanos)));
                outstanding.acquire();
                requests.add(client.sendAsync(request(path, key, patience), HttpResponse.BodyHandlers.ofString())
                        .whenComplete((response, failure) -> outstanding.release())
                        .handle((response, failure) -> outcomes.computeIfAbsent(
                                failure != null ? "client gave up" : Integer.toString(response.statusCode()),
                                outcome -> new AtomicLong()).incrementAndGet()));
            }
            CompletableFuture.allOf(requests.toArray(CompletableFuture[]::new)).get(3, TimeUnit.MINUTES);
        }
        awaitQuiet();

        FailSafeStore failSafe = store.find(FailSafeStore.class).orElseThrow();
        long inRedis = PermitsInRedis.count(redis.server());
        int renewed = store.find(RedisRateLimitStore.class).orElseThrow().permits().held();
        System.out.printf("MVC permit storm: %d requests, answers %s, %d fallback decisions, breaker %s; afterwards "
                + "%d permit(s) in Redis, %d renewed by the gateway%n", REQUESTS, outcomes,
                failSafe.fallbackDecisions(), failSafe.breaker().state(), inRedis, renewed);
        assertThat(outcomes.getOrDefault("client gave up", new AtomicLong()).get())
                .as("requests the client gave up on").isGreaterThan(REQUESTS / 5);
        assertThat(failSafe.fallbackDecisions()).as("decisions the jitter pushed past the store timeout")
                .isPositive().isLessThan(REQUESTS);
        assertThat(outcomes).as("answered, refused for concurrency, and failed at the upstream all happened")
                .containsKeys("200", "429", "500");
        assertThat(inRedis).as("permits left in Redis: " + PermitsInRedis.dump(redis.server())).isZero();
        assertThat(renewed).as("permits the gateway still renews").isZero();
        for (int c = 0; c < CLIENTS; c++) {
            assertThat(fullQuota(client, "client-" + c)).as("client-" + c + " takes its whole quota again")
                    .containsOnly(200).hasSize(PER_CLIENT);
        }
    }

    private HttpRequest request(String path, String apiKey, Duration timeout) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(timeout)
                .header("X-API-Key", apiKey).GET().build();
    }

    /** Warms the gateway up; returns the median time of a request to the slow route on this machine now. */
    private long warmUp(HttpClient client) throws Exception {
        List<Long> nanos = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            long start = System.nanoTime();
            HttpResponse<String> response = client.send(request("/slow/warm-up", "warm-up", Duration.ofSeconds(10)),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            nanos.add(System.nanoTime() - start);
        }
        List<Long> last = nanos.subList(20, 40).stream().sorted().toList();
        return last.get(last.size() / 2);
    }

    /** Until the upstream is idle, the breaker closed and Redis holds nothing, or 10 s (a lease is 30 s). */
    private void awaitQuiet() {
        StoreBreaker breaker = store.find(FailSafeStore.class).orElseThrow().breaker();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline
                && (upstream.inFlight() > 0 || breaker.state() != StoreBreaker.State.CLOSED
                        || PermitsInRedis.count(redis.server()) > 0)) {
            if (breaker.state() == StoreBreaker.State.OPEN) {
                breaker.close();
            }
            sleep(Duration.ofMillis(50));
        }
        sleep(Duration.ofMillis(300));
    }

    /** {@value #PER_CLIENT} slow requests of one client at once, half of them async: each must get a permit. */
    private List<Integer> fullQuota(HttpClient client, String key) throws Exception {
        upstream.delay(Duration.ofMillis(150));
        try {
            List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
            for (int i = 0; i < PER_CLIENT; i++) {
                all.add(client.sendAsync(request(i % 2 == 0 ? "/slow/quota" : "/async/quota", key,
                        Duration.ofSeconds(20)), HttpResponse.BodyHandlers.ofString()));
            }
            List<Integer> statuses = new ArrayList<>();
            for (CompletableFuture<HttpResponse<String>> response : all) {
                statuses.add(response.get(20, TimeUnit.SECONDS).statusCode());
            }
            return statuses;
        }
        finally {
            upstream.delay(Duration.ofMillis(20));
        }
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}

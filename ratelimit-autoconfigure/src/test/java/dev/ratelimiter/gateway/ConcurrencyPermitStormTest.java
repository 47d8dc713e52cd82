package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.StoreBreaker;
import dev.ratelimiter.redis.RedisRateLimitStore;
import dev.ratelimiter.testsupport.LatencyProxy;
import dev.ratelimiter.testsupport.PermitsInRedis;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tries hardest to leak a concurrency permit: thousands of requests, each abandoned by its client at a random moment
 * — before the decision, while Redis decides, during the hop back to the event loop, while the upstream works, in the
 * middle of the response — while the network to Redis jitters around the 5 ms store timeout, so that some decisions
 * time out (and land in Redis later), some are made from the fallback, and the breaker opens and closes under the
 * requests in flight. Afterwards nothing may be held: no permit in Redis, none renewed by the gateway, and every
 * client can take its whole quota again.
 */
@DirtiesContext
@SpringBootTest(classes = TestGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ConcurrencyPermitStormTest {

    private static final int REQUESTS = 3_000;
    private static final int CLIENTS = 12;
    private static final int PER_CLIENT = 4;
    private static final long SEED = Long.getLong("ratelimit.test.seed", 20261201L);

    @RegisterExtension
    static final GatewayFixture fixture = GatewayFixture.keptAcrossTestsOnSharedRedis();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    static LatencyProxy network;

    @LocalServerPort
    int port;

    @Autowired
    RateLimitStore store;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        network = new LatencyProxy(redis.host(), redis.port(), Duration.ZERO);
        registry.add("spring.data.redis.url", network::url);
        registry.add("ratelimit.store.type", () -> "redis");
        fixture.route(registry, 0, "slow", "/slow/**");
        fixture.route(registry, 1, "stream", "/stream/**");
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.rules.per-client.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.per-client.max-in-progress", () -> String.valueOf(PER_CLIENT));
        registry.add("ratelimit.rules.per-route.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.per-route.key[0]", () -> "route");
        registry.add("ratelimit.rules.per-route.max-in-progress", () -> "30");
    }

    @AfterAll
    static void close() {
        upstream.close();
        network.close();
    }

    @Test
    void thousandsOfRequestsAbandonedAtRandomMomentsWhileRedisJittersLeaveNoPermitBehind() {
        Random random = new Random(SEED);
        upstream.delay(Duration.ofMillis(20));
        WebClient client = WebClient.create("http://127.0.0.1:" + port);
        long typicalNanos = warmUp(client);
        Map<Integer, AtomicLong> statuses = new ConcurrentHashMap<>();
        AtomicLong abandoned = new AtomicLong();
        List<Mono<Void>> requests = new ArrayList<>(REQUESTS);
        for (int i = 0; i < REQUESTS; i++) {
            String key = "client-" + random.nextInt(CLIENTS);
            String path = (random.nextInt(3) == 0 ? "/stream/" : "/slow/") + i;
            // From before the decision through the hop and the upstream's 20 ms to the middle of the streamed
            // response: up to six times a typical request on this machine, short waits more often than long ones.
            Duration patience = Duration.ofNanos((long) (Math.pow(random.nextDouble(), 1.5) * 6 * typicalNanos));
            requests.add(client.get().uri(path).header("X-API-Key", key)
                    .exchangeToMono(response -> response.bodyToMono(String.class).then(Mono.just(response.statusCode()
                            .value())))
                    .timeout(patience)
                    .doOnNext(status -> statuses.computeIfAbsent(status, s -> new AtomicLong()).incrementAndGet())
                    .onErrorResume(failure -> {
                        abandoned.incrementAndGet();
                        return Mono.empty();
                    })
                    .then());
        }
        try (LatencyProxy.Jitter jitter = network.jitter(new Random(random.nextLong()), 0, 0, 0, 0, 0, 0, 1, 3, 7)) {
            Flux.fromIterable(requests).flatMap(request -> request, 16).blockLast(Duration.ofMinutes(3));
        }
        awaitQuiet();

        FailSafeStore failSafe = store.find(FailSafeStore.class).orElseThrow();
        long inRedis = PermitsInRedis.count(redis.server());
        int renewed = store.find(RedisRateLimitStore.class).orElseThrow().permits().held();
        System.out.printf("Permit storm: %d requests, %d abandoned by the client, answers %s, %d fallback decisions, "
                + "breaker %s; afterwards %d permit(s) in Redis, %d renewed by the gateway%n", REQUESTS,
                abandoned.get(), statuses, failSafe.fallbackDecisions(), failSafe.breaker().state(), inRedis,
                renewed);
        assertThat(abandoned.get()).as("requests the client gave up on").isGreaterThan(REQUESTS / 4);
        assertThat(failSafe.fallbackDecisions()).as("decisions the jitter pushed past the store timeout")
                .isPositive();
        assertThat(inRedis).as("permits left in Redis: " + PermitsInRedis.dump(redis.server())).isZero();
        assertThat(renewed).as("permits the gateway still renews").isZero();
        for (int c = 0; c < CLIENTS; c++) {
            assertThat(fullQuota(client, "client-" + c)).as("client-" + c + " takes its whole quota again")
                    .containsOnly(200).hasSize(PER_CLIENT);
        }
    }

    /** Warms the gateway up; returns the median time of a request to the slow route on this machine now. */
    private static long warmUp(WebClient client) {
        List<Long> nanos = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            long start = System.nanoTime();
            Integer status = client.get().uri("/slow/warm-up").header("X-API-Key", "warm-up")
                    .exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value()))
                    .block(Duration.ofSeconds(10));
            assertThat(status).isEqualTo(200);
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
            Load.sleep(Duration.ofMillis(50));
        }
        Load.sleep(Duration.ofMillis(300));
    }

    /** {@value #PER_CLIENT} slow requests of one client at once: each must get a permit. */
    private static List<Integer> fullQuota(WebClient client, String key) {
        upstream.delay(Duration.ofMillis(150));
        try {
            return Flux.range(0, PER_CLIENT)
                    .flatMap(i -> client.get().uri("/slow/quota").header("X-API-Key", key)
                            .exchangeToMono(response -> response.releaseBody()
                                    .thenReturn(response.statusCode().value())), PER_CLIENT)
                    .collectList().block(Duration.ofSeconds(20));
        }
        finally {
            upstream.delay(Duration.ofMillis(20));
        }
    }
}

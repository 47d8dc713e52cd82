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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.testsupport.LoopbackPorts;
import dev.ratelimiter.testsupport.StubUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Priority load shedding on Gateway Server MVC, on real Tomcat and Redis: an upstream at its limit sheds background
 * work with the WebFlux flavour's 503, keeps room for user-facing work, and counts a request in flight only while it
 * is — however it ends: answered, refused by the limiter first, failed at the upstream, or abandoned by its client.
 * The in-flight gauge must come back to exactly 0; a ticket never released would shed that upstream's traffic for
 * good.
 */
@DirtiesContext
@SpringBootTest(classes = TestMvcGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MvcLoadSheddingIntegrationTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();
    static final StubUpstream upstream = fixture.upstream();
    static final int DEAD_PORT = LoopbackPorts.refusing();

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("ratelimit.store.timeout", () -> "2s");
        registry.add(fixture.route(registry, 0, "user", "/user/**") + "metadata.ratelimit-priority", () -> "critical");
        registry.add(fixture.route(registry, 1, "batch", "/batch/**") + "metadata.ratelimit-priority",
                () -> "background");
        MvcRoutes.route(registry, 2, "broken", "/broken/**", () -> "http://127.0.0.1:" + DEAD_PORT);
        registry.add("ratelimit.default-tier", () -> "free");
        registry.add("ratelimit.tiers.free.limits.default.capacity", () -> "1000000");
        registry.add("ratelimit.tiers.free.limits.default.refill-tokens", () -> "1000000");
        // one key the limiter refuses after its first request: refused requests never count in flight
        registry.add("ratelimit.rules.tiny.match.route-ids[0]", () -> "user");
        registry.add("ratelimit.rules.tiny.capacity", () -> "1");
        registry.add("ratelimit.rules.tiny.refill-tokens", () -> "1");
        registry.add("ratelimit.rules.tiny.refill-period", () -> "1h");
        registry.add("ratelimit.shedding.upstreams.shared.route-ids[0]", () -> "user");
        registry.add("ratelimit.shedding.upstreams.shared.route-ids[1]", () -> "batch");
        registry.add("ratelimit.shedding.upstreams.shared.route-ids[2]", () -> "broken");
        registry.add("ratelimit.shedding.upstreams.shared.max-in-flight", () -> "20");
    }

    @BeforeEach
    void reset() {
        upstream.delay(Duration.ZERO);
    }

    @Test
    void aShedRequestIsA503OverloadedWhileUserFacingWorkStillFits() throws Exception {
        upstream.delay(Duration.ofSeconds(1));
        List<CompletableFuture<HttpResponse<String>>> holding = new ArrayList<>();
        for (int i = 0; i < 18; i++) {
            holding.add(send("/user/hold", "holder-" + i, Duration.ofSeconds(20)));
        }
        awaitUpstreamInFlight(18);
        assertThat(inFlight()).as("18 requests in progress at the upstream").isEqualTo(18);

        HttpResponse<String> shed = send("/batch/job", "batcher", Duration.ofSeconds(10)).get(10, TimeUnit.SECONDS);
        assertThat(shed.statusCode()).isEqualTo(503);
        assertThat(shed.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(shed.body()).contains("\"error\":\"overloaded\"").contains("\"priority\":\"background\"")
                .contains("\"upstream\":\"shared\"");
        assertThat(send("/user/now", "person", Duration.ofSeconds(10)).get(10, TimeUnit.SECONDS).statusCode())
                .as("a user-facing request still fits").isEqualTo(200);
        for (CompletableFuture<HttpResponse<String>> held : holding) {
            assertThat(held.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        assertThat(upstream.hits("/batch/job")).as("the shed request never reached the upstream").isZero();
        assertThat(meters.get("ratelimit.shed").tag("upstream", "shared").tag("priority", "background")
                .functionCounter().count()).isGreaterThanOrEqualTo(1);
        awaitInFlight(0);
    }

    @Test
    void everyWayARequestEndsGivesItsPlaceBack() throws Exception {
        Random random = new Random(19);
        Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        List<CompletableFuture<?>> all = new ArrayList<>();
        // at most 15 at once, under the limit of 20: each request ends its own way, none is shed
        Semaphore outstanding = new Semaphore(15);
        for (int i = 0; i < 200; i++) {
            outstanding.acquire();
            int kind = random.nextInt(4);
            upstream.delay(Duration.ofMillis(random.nextInt(30)));
            CompletableFuture<?> request = switch (kind) {
                case 0 -> send("/user/ok", "user-" + i, Duration.ofSeconds(20)); // answered
                case 1 -> send("/broken/x", "user-" + i, Duration.ofSeconds(20)); // connection refused upstream
                case 2 -> send("/user/gone", "user-" + i, Duration.ofMillis(1 + random.nextInt(10))); // client leaves
                default -> send("/user/tiny", "tiny", Duration.ofSeconds(20)); // 429 after the first
            };
            all.add(request.whenComplete((response, failure) -> outstanding.release()).handle((response, failure) -> {
                String outcome = failure != null ? "client gave up"
                        : Integer.toString(((HttpResponse<?>) response).statusCode());
                outcomes.computeIfAbsent(outcome, o -> new AtomicInteger()).incrementAndGet();
                return null;
            }));
            if (random.nextInt(8) == 0) {
                Thread.sleep(random.nextInt(20));
            }
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        System.out.println("MVC shedding, every way a request ends: " + outcomes);
        assertThat(outcomes).as("the mix exercised every ending").containsKeys("200", "429", "500",
                "client gave up");
        awaitInFlight(0);
        assertThat(upstream.maxInFlight()).as("never past the limit at the upstream").isLessThanOrEqualTo(20);
    }

    private CompletableFuture<HttpResponse<String>> send(String path, String apiKey, Duration timeout) {
        return client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("X-API-Key", apiKey).timeout(timeout).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private double inFlight() {
        return meters.get("ratelimit.upstream.in.flight").tag("upstream", "shared").gauge().value();
    }

    /** Released once the servlet is done with the request, a moment after the client has it (or has left). */
    private void awaitInFlight(double expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (inFlight() != expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(inFlight()).as("requests counted in flight at the shared upstream").isEqualTo(expected);
    }

    private void awaitUpstreamInFlight(int expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (upstream.inFlight() < expected && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }
}

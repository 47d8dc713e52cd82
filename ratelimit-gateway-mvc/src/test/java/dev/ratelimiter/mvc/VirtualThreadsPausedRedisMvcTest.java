package dev.ratelimiter.mvc;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.StoreBreaker;
import dev.ratelimiter.gateway.RateLimitHeaders;
import dev.ratelimiter.testsupport.RedisServerExtension;
import dev.ratelimiter.testsupport.StubUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.filter.OncePerRequestFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The MVC flavour on virtual threads ({@code spring.threads.virtual.enabled}): requests are decided on virtual
 * threads, and with Redis frozen (SIGSTOP: connections open, nothing answered) a burst of many more requests than
 * there are carrier threads, each waiting out the store timeout at the same moment, is answered within the timeout
 * and a generous margin by the rules' failure modes; once Redis is back, its buckets decide again.
 *
 * <p>Runs only on Java 21+, in the module's second surefire execution (tag {@value #TAG}, a Java 25 fork): the
 * build compiles for Java 17, so {@code Thread.isVirtual} is called reflectively.
 */
@Tag(VirtualThreadsPausedRedisMvcTest.TAG)
@EnabledForJreRange(min = JRE.JAVA_21)
@DirtiesContext
@SpringBootTest(classes = { TestMvcGatewayApplication.class, VirtualThreadsPausedRedisMvcTest.ThreadProbe.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class VirtualThreadsPausedRedisMvcTest {

    static final String TAG = "virtual-threads";

    /** Far more than the virtual-thread scheduler's carriers (one per core by default). */
    private static final int AT_ONCE = 200;
    private static final Duration STORE_TIMEOUT = Duration.ofMillis(100);
    /**
     * The store timeout plus a margin for a loaded machine (seen on 2 shared cores: the slowest at 0.4 s when quiet,
     * 4.7 s at a load of 13, thread dumps included), far below Lettuce's command timeout (60 s here), which a request
     * would wait without the store timeout. Carriers held by the waits are checked directly, not by timing: JFR's
     * pinned event, the monitors the waiting threads hold, and more threads waiting at once than there are carriers.
     */
    private static final Duration GENEROUS = STORE_TIMEOUT.plus(Duration.ofSeconds(15));
    private static final int CAPACITY = 3;

    @RegisterExtension
    static final MvcGatewayFixture fixture = new MvcGatewayFixture();
    static final RedisServerExtension redis = fixture.redis();
    static final StubUpstream upstream = fixture.upstream();

    /** Whether the thread that ran each request's servlet chain (limiter included) was virtual, by API key. */
    static final Map<String, Boolean> virtualByApiKey = new ConcurrentHashMap<>();

    /** Notes the thread every request is served on: the one the limiter decides and waits on. */
    @TestConfiguration(proxyBeanMethods = false)
    static class ThreadProbe {

        @Bean
        OncePerRequestFilter threadProbe() {
            return new OncePerRequestFilter() {
                @Override
                protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
                        FilterChain chain) throws ServletException, IOException {
                    String apiKey = request.getHeader("X-API-Key");
                    if (apiKey != null) {
                        virtualByApiKey.put(apiKey, isVirtual(Thread.currentThread()));
                    }
                    chain.doFilter(request, response);
                }
            };
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    RateLimitStore store;

    @Autowired
    MeterRegistry meters;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        fixture.redisProperties(registry);
        registry.add("spring.threads.virtual.enabled", () -> "true");
        registry.add("spring.data.redis.timeout", () -> "60s");
        registry.add("ratelimit.store.timeout", STORE_TIMEOUT::toString);
        // A breaker that stays closed: every request of the burst asks the paused store and waits out the timeout,
        // instead of most being answered at once by an open breaker.
        String breaker = "resilience4j.circuitbreaker.instances.ratelimit-redis.";
        registry.add(breaker + "sliding-window-size", () -> "1000");
        registry.add(breaker + "minimum-number-of-calls", () -> "1000");
        String open = fixture.route(registry, 0, "open", "/open/**");
        registry.add(open + "metadata.route-class", () -> "open");
        String closed = fixture.route(registry, 1, "closed", "/closed/**");
        registry.add(closed + "metadata.route-class", () -> "closed");
        registry.add("ratelimit.default-tier", () -> "free");
        for (String mode : List.of("open", "closed")) {
            String limit = "ratelimit.tiers.free.limits." + mode + ".";
            registry.add(limit + "capacity", () -> CAPACITY);
            registry.add(limit + "refill-tokens", () -> CAPACITY);
            registry.add(limit + "refill-period", () -> "1h");
            registry.add(limit + "failure-mode", () -> mode);
        }
    }

    @AfterEach
    void thaw() {
        if (!redis.server().isRunning()) {
            redis.server().resume();
        }
    }

    @Test
    void onVirtualThreadsAPausedRedisAddsAtMostTheStoreTimeoutToEachOfManyRequestsAtOnce() throws Exception {
        Http http = new Http(port);
        assertThat(AT_ONCE).as("more requests than carriers").isGreaterThan(Runtime.getRuntime().availableProcessors());
        // With Redis answering: every request on a virtual thread, and the connections the paused burst reuses.
        // (A store call of this cold burst may pass the 100 ms on a loaded machine: a fail-closed route's 503.)
        assertThat(http.get("/open/first", "first").headers().firstValue(RateLimitHeaders.REMAINING))
                .as("decided by Redis").hasValue(String.valueOf(CAPACITY - 1));
        for (Answer answer : burst(http, "warm")) {
            assertThat(answer.response().statusCode()).as(answer.apiKey()).isIn(200, 503);
        }
        assertThat(virtualByApiKey).hasSize(AT_ONCE + 1).allSatisfy((key, virtual) -> assertThat(virtual).as(key).isTrue());

        double timeoutsBefore = storeCalls("timeout");
        long fallbackBefore = store.find(FailSafeStore.class).orElseThrow().fallbackDecisions();
        List<Answer> paused;
        List<String> pinned;
        List<WaitingVirtualThreads.Waiting> waiting;
        int waitingAtOnce;
        redis.server().pause();
        try (PinnedVirtualThreads recording = PinnedVirtualThreads.start();
                WaitingVirtualThreads waits = WaitingVirtualThreads.sample(DecisionWait.class.getName() + ".await")) {
            long start = System.nanoTime();
            paused = burst(http, "paused");
            System.out.printf("%d requests at once with Redis paused: all answered in %d ms, the slowest in %d ms%n",
                    AT_ONCE, Duration.ofNanos(System.nanoTime() - start).toMillis(),
                    paused.stream().mapToLong(a -> a.took().toMillis()).max().orElseThrow());
            pinned = recording.stop();
            waiting = waits.stop();
            waitingAtOnce = waits.mostAtOnce();
        }
        finally {
            redis.server().resume();
        }

        for (Answer answer : paused) {
            String what = answer.path() + " " + answer.apiKey();
            assertThat(answer.took()).as(what + " waited").isLessThan(GENEROUS);
            assertThat(virtualByApiKey.get(answer.apiKey())).as(what + " on a virtual thread").isTrue();
            if (answer.path().startsWith("/open")) {
                assertThat(answer.response().statusCode()).as(what + ": fail-open").isEqualTo(200);
                assertThat(upstream.hitsForApiKey(answer.apiKey())).as(what + " reached the upstream").isEqualTo(1);
            }
            else {
                // Even a decision later than DecisionWait's backstop (a loaded machine) is decided by the failure
                // modes: a fail-closed rule is never let through.
                assertThat(answer.response().statusCode()).as(what + ": fail-closed").isEqualTo(503);
                assertThat(answer.response().body()).as(what).contains("\"limiter_unavailable\"");
                assertThat(answer.response().headers().firstValue("Retry-After")).as(what).isPresent();
                assertThat(upstream.hitsForApiKey(answer.apiKey())).as(what + " reached the upstream").isZero();
            }
        }
        assertThat(storeCalls("timeout") - timeoutsBefore).as("requests that waited out the store timeout")
                .isGreaterThanOrEqualTo(AT_ONCE);
        assertThat(store.find(FailSafeStore.class).orElseThrow().fallbackDecisions() - fallbackBefore)
                .as("decided by the failure modes").isGreaterThanOrEqualTo(AT_ONCE);
        assertThat(pinned).as("virtual threads that held their carrier while waiting").isEmpty();
        System.out.printf("%d virtual threads seen waiting for their decision, at most %d at once; one waited at: %s%n",
                waiting.size(), waitingAtOnce, waiting.isEmpty() ? "-" : String.join(" < ", waiting.get(0).stack()));
        assertThat(waiting).as("virtual threads seen in the decision wait").hasSizeGreaterThan(1)
                .allSatisfy(thread -> assertThat(thread.monitors())
                        .as("monitors held while waiting (they would pin the carrier on Java 21-23): %s",
                                thread.stack())
                        .isEmpty());
        assertThat(waitingAtOnce).as("threads waiting for their decision at once, over the carriers")
                .isGreaterThan(Runtime.getRuntime().availableProcessors());

        awaitStoreAnswering(http);
        for (String path : List.of("/open/after", "/closed/after")) {
            for (int i = 0; i < CAPACITY; i++) {
                assertThat(http.get(path, "after").statusCode()).as(path + " request " + i).isEqualTo(200);
            }
            assertThat(http.get(path, "after").statusCode()).as(path + " past capacity, Redis back").isEqualTo(429);
        }
        assertThat(store.find(FailSafeStore.class).orElseThrow().breaker().state())
                .isEqualTo(StoreBreaker.State.CLOSED);
    }

    /** {@link #AT_ONCE} requests sent together, half to the fail-open route and half to the fail-closed one. */
    private List<Answer> burst(Http http, String phase) {
        List<CompletableFuture<Answer>> sent = new ArrayList<>();
        for (int i = 0; i < AT_ONCE; i++) {
            String path = (i % 2 == 0 ? "/open/" : "/closed/") + phase;
            String apiKey = phase + "-" + i;
            long start = System.nanoTime();
            sent.add(http.getLater(path, apiKey)
                    .thenApply(response -> new Answer(path, apiKey, response, Duration.ofNanos(System.nanoTime() - start))));
        }
        return sent.stream().map(CompletableFuture::join).toList();
    }

    /** Until a decision is the store's again: the commands queued during the pause answered, the connection idle. */
    private void awaitStoreAnswering(Http http) throws Exception {
        double answered = storeCalls("success");
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        for (int i = 0; storeCalls("success") <= answered && System.nanoTime() < deadline; i++) {
            http.get("/open/probe", "probe-" + i);
        }
        assertThat(storeCalls("success")).as("store calls answered after the resume").isGreaterThan(answered);
    }

    private double storeCalls(String outcome) {
        return meters.get("ratelimit.store.calls").tag("outcome", outcome).timer().count();
    }

    private static boolean isVirtual(Thread thread) {
        try {
            Method isVirtual = Thread.class.getMethod("isVirtual");
            return (Boolean) isVirtual.invoke(thread);
        }
        catch (ReflectiveOperationException ex) {
            throw new IllegalStateException("Thread.isVirtual needs Java 21+", ex);
        }
    }

    private record Answer(String path, String apiKey, HttpResponse<String> response, Duration took) {
    }
}

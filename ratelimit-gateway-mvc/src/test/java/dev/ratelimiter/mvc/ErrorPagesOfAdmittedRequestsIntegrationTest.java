package dev.ratelimiter.mvc;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.ratelimiter.testsupport.LoopbackPorts;
import dev.ratelimiter.testsupport.StubUpstream;
import io.micrometer.core.instrument.MeterRegistry;
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
 * The error page of a request the limiter admitted (its upstream call then failed) goes to the upstream of the
 * catch-all route that takes {@code /error}: that call is decided there like any request, and counts there — for the
 * route's concurrency rule and its upstream's load shedder — while a refusal of it is answered with the failure's own
 * status, never a 429 to a request that was let through. Found by the attack review: with such error pages not
 * decided at all, a client whose requests fail after admission had as many calls at the error route's upstream at
 * once as it liked (6 against a 2-at-once rule and a 2-in-flight shedder, whose gauge read 0).
 */
@DirtiesContext
@SpringBootTest(classes = TestMvcGatewayApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ErrorPagesOfAdmittedRequestsIntegrationTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

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
        // the error page is proxied by a catch-all gateway route to a (slow) upstream
        fixture.route(registry, 0, "errors", "/error");
        // its upstream refuses connections: the request fails at once, after the limiter admitted it
        MvcRoutes.route(registry, 1, "broken", "/broken/**", () -> "http://127.0.0.1:" + LoopbackPorts.refusing());
        // at most 2 of a client's requests in progress, on both routes
        registry.add("ratelimit.rules.in-progress.algorithm", () -> "concurrency");
        registry.add("ratelimit.rules.in-progress.max-in-progress", () -> "2");
        registry.add("ratelimit.rules.in-progress.match.route-ids[0]", () -> "broken");
        registry.add("ratelimit.rules.in-progress.match.route-ids[1]", () -> "errors");
        // and the error route's upstream sheds above 2 in flight
        registry.add("ratelimit.shedding.upstreams.errorpages.route-ids[0]", () -> "errors");
        registry.add("ratelimit.shedding.upstreams.errorpages.max-in-flight", () -> "2");
    }


    /**
     * One client, 6 requests to the broken route one after the other: each is admitted (the one before has failed and given
     * its permit back), fails at once, and its error page is proxied to the error route's upstream, which takes 2 s.
     * A concurrency rule of 2 on the error route, and its shedder's 2 in flight, should keep the upstream at 2 at
     * once; it gets all 6, and the shedder's gauge says 0 while they are there.
     */
    @Test
    void theErrorPagesOfAdmittedRequestsAreCountedAtTheErrorRoutesUpstream() throws Exception {
        upstream.delay(Duration.ofSeconds(2));
        Http http = new Http(port);
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            answers.add(http.getLater("/broken/x", "error-client"));
            // the next one once this one's error page is at the upstream (its /broken request failed and ended)
            long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            while (upstream.hits("/error") <= i && !answers.get(i).isDone() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
        }
        double gauge = meters.get("ratelimit.upstream.in.flight").tag("upstream", "errorpages").gauge().value();
        int atTheUpstream = upstream.inFlight();
        List<Integer> statuses = answers.stream().map(answer -> answer.join().statusCode()).toList();
        assertThat(upstream.maxInFlight("error-client"))
                .as("error-page calls of one 2-at-once client at the error route's upstream at once (%s)", statuses)
                .isLessThanOrEqualTo(2);
        assertThat(gauge).as("shedder's in-flight gauge with %d error-page calls at its upstream", atTheUpstream)
                .isEqualTo((double) atTheUpstream);
        // the rule is the client's on both routes: two error pages in progress hold both permits, so the next
        // requests to the broken route are themselves refused (429, before any call), and no error page is refused
        assertThat(statuses).as("answers").startsWith(200, 200).containsOnly(200, 429);
        assertThat(upstream.hits("/error")).as("error pages proxied: one per answer 200").isEqualTo(
                statuses.stream().filter(status -> status == 200).count());
    }
}

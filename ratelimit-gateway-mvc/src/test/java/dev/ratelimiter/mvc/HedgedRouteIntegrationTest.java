package dev.ratelimiter.mvc;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.testsupport.StubUpstream;
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
 * A hedging filter runs its route's chain on two threads at once, both naming the route together: the request is
 * decided once, and when that decision is a refusal neither thread reaches the upstream. Found by the attack review:
 * the second thread, arriving while the first waited for Redis, read "nothing armed, nothing refused" outside the
 * decision's lock and went on undecided, so a refused request (answered 429) still had a call at the upstream.
 */
@DirtiesContext
@SpringBootTest(classes = { TestMvcGatewayApplication.class, HedgedRouteIntegrationTest.Routes.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class HedgedRouteIntegrationTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();
    static final StubUpstream upstream = fixture.upstream();
    static final ExecutorService workers = Executors.newCachedThreadPool();

    @TestConfiguration(proxyBeanMethods = false)
    static class Routes {

        @Bean
        RouterFunction<ServerResponse> hedged() {
            HandlerFilterFunction<ServerResponse, ServerResponse> hedge = (request, next) -> {
                CountDownLatch together = new CountDownLatch(2);
                List<CompletableFuture<ServerResponse>> tries = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    tries.add(CompletableFuture.supplyAsync(() -> {
                        together.countDown();
                        try {
                            together.await(5, TimeUnit.SECONDS);
                            return next.handle(request);
                        }
                        catch (Exception ex) {
                            throw new CompletionException(ex);
                        }
                    }, workers));
                }
                try {
                    return tries.get(0).join();
                }
                finally {
                    tries.get(1).handle((response, failure) -> null).join();
                }
            };
            return GatewayRouterFunctions.route("hedged").GET("/hedged/**", HandlerFunctions.http())
                    .before(BeforeFilterFunctions.uri(upstream.uri())).build().filter(hedge);
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
        registry.add("ratelimit.rules.per-route.capacity", () -> "2");
        registry.add("ratelimit.rules.per-route.refill-tokens", () -> "2");
        registry.add("ratelimit.rules.per-route.refill-period", () -> "1h");
        registry.add("ratelimit.rules.per-route.key[0]", () -> "route");
        registry.add("ratelimit.rules.per-route.match.route-ids[0]", () -> "hedged");
    }

    @Test
    void aRefusedRequestWhoseChainRunsTwiceAtOnceReachesNoUpstream() throws Exception {
        Http http = new Http(port);
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            HttpResponse<String> response = http.get("/hedged/x", "hedge-" + i);
            statuses.add(response.statusCode());
            Thread.sleep(Duration.ofMillis(50).toMillis());
        }
        assertThat(statuses).as("each request charged once: 2 admitted, then refused").containsExactly(200, 200, 429,
                429);
        assertThat(List.of(upstream.hitsForApiKey("hedge-2"), upstream.hitsForApiKey("hedge-3")))
                .as("calls at the upstream of the two refused requests (%s)", statuses).containsExactly(0L, 0L);
        assertThat(upstream.hits("/hedged/x")).as("2 admitted requests, 2 calls each; none for the refused")
                .isEqualTo(4);
    }
}

package dev.ratelimiter.mvc;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import dev.ratelimiter.testsupport.LoopbackPorts;
import dev.ratelimiter.testsupport.StubUpstream;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions;
import org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions;
import org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Gateway routes composed every way WebMvc.fn allows, through real Tomcat and Redis: each is decided as the route that
 * took the request, and only that one. A gateway route nested under a path prefix (once, twice) is limited; a plain
 * route joined after a gateway route in one bean is not decided as it (found by the attack review: it spent the
 * gateway route's per-route cap, and a nested gateway route was never limited at all); a gateway route after a plain
 * one is; and a filter around a gateway route that catches what its chain throws cannot turn a 429 into its own
 * answer.
 *
 * <p>However else a request reaches a gateway route's upstream — through async work on another thread, a filter that
 * tries its chain again or wraps the refusal in its own exception, a forward from a route that opted out, or the
 * container's error page — the limiter decides it, and a request it refused reaches no upstream (found by the attack
 * review: each of these got past it). The rule {@code per-route} gives each route 2 requests an hour, whoever sends
 * them.
 */
@DirtiesContext
@SpringBootTest(classes = { TestMvcGatewayApplication.class, ComposedRoutesIntegrationTest.Routes.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ComposedRoutesIntegrationTest {

    @RegisterExtension
    static final MvcGatewayFixture fixture = MvcGatewayFixture.onSharedRedis();
    static final StubUpstream upstream = fixture.upstream();

    @TestConfiguration(proxyBeanMethods = false)
    static class Routes {

        @Bean
        RouterFunction<ServerResponse> nestedOnce() {
            return RouterFunctions.route().path("/nested", api -> api.add(gateway("nested", "/**"))).build();
        }

        @Bean
        RouterFunction<ServerResponse> nestedTwice() {
            return RouterFunctions.nest(RequestPredicates.path("/deep"),
                    RouterFunctions.route().path("/er", inner -> inner.add(gateway("deep", "/**"))).build());
        }

        @Bean
        RouterFunction<ServerResponse> mixed() {
            return gateway("login", "/login/**")
                    .and(RouterFunctions.route().GET("/health", request -> ServerResponse.ok().body("up")).build())
                    .and(gateway("after", "/after/**"));
        }

        @Bean
        RouterFunction<ServerResponse> caught() {
            return gateway("caught", "/caught/**").filter((request, next) -> {
                try {
                    return next.handle(request);
                }
                catch (Exception ex) {
                    return ServerResponse.status(500).body("the filter's own answer");
                }
            });
        }

        /** A gateway route answered asynchronously ({@code ServerResponse.async}, as a timeout filter would). */
        @Bean
        RouterFunction<ServerResponse> asyncWrapped() {
            return gateway("async", "/async/**").filter((request, next) -> ServerResponse
                    .async(CompletableFuture.supplyAsync(() -> {
                        try {
                            return next.handle(request);
                        }
                        catch (Exception ex) {
                            throw new CompletionException(ex);
                        }
                    })));
        }

        /** A gateway route behind a filter that tries its chain once more when it throws (a naive retry). */
        @Bean
        RouterFunction<ServerResponse> retried() {
            return gateway("retry", "/retry/**").filter((request, next) -> {
                try {
                    return next.handle(request);
                }
                catch (Exception first) {
                    return next.handle(request);
                }
            });
        }

        /** A gateway route behind a filter that wraps whatever its chain throws in an exception of its own. */
        @Bean
        RouterFunction<ServerResponse> wrapping() {
            return gateway("wrapping", "/wrapping/**").filter((request, next) -> {
                try {
                    return next.handle(request);
                }
                catch (RuntimeException ex) {
                    throw new IllegalStateException("the chain failed", ex);
                }
            });
        }

        /** Answers /boom with the container's error page, which the route on /error proxies. */
        @Bean
        FilterRegistrationBean<Filter> boom() {
            return new FilterRegistrationBean<>((request, response, chain) -> {
                if ("/boom".equals(((HttpServletRequest) request).getRequestURI())) {
                    ((HttpServletResponse) response).sendError(418);
                    return;
                }
                chain.doFilter(request, response);
            });
        }

        private static RouterFunction<ServerResponse> gateway(String id, String path) {
            return GatewayRouterFunctions.route(id).GET(path, HandlerFunctions.http())
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
        registry.add("ratelimit.rules.per-route.capacity", () -> "2");
        registry.add("ratelimit.rules.per-route.refill-tokens", () -> "2");
        registry.add("ratelimit.rules.per-route.refill-period", () -> "1h");
        registry.add("ratelimit.rules.per-route.key[0]", () -> "route");
        fixture.route(registry, 0, "limited", "/limited/**");
        // opts out of the limiter and forwards to the limited route
        MvcRoutes.route(registry, 1, "optout", "/optout/**", () -> "forward:/limited/forwarded");
        registry.add("spring.cloud.gateway.server.webmvc.routes[1].metadata.ratelimit-enabled", () -> "false");
        fixture.route(registry, 2, "errors", "/error");
        // its upstream refuses connections: the request fails after the limiter admitted it
        MvcRoutes.route(registry, 3, "broken", "/broken/**", () -> "http://127.0.0.1:" + LoopbackPorts.refusing());
        List<String> routes = List.of("nested", "deep", "login", "after", "caught", "async", "retry", "wrapping",
                "limited", "errors", "broken");
        for (int i = 0; i < routes.size(); i++) {
            int index = i;
            registry.add("ratelimit.rules.per-route.match.route-ids[" + i + "]", () -> routes.get(index));
        }
    }

    @Test
    void aGatewayRouteNestedUnderAPathOnceOrTwiceIsLimited() throws Exception {
        assertThat(statuses("/nested/x", 4)).containsExactly(200, 200, 429, 429);
        assertThat(statuses("/deep/er/x", 3)).containsExactly(200, 200, 429);
        assertThat(upstream.hits()).as("only the admitted reached the upstream").isEqualTo(4);
    }

    @Test
    void aPlainRouteJoinedAfterAGatewayRouteIsNotDecidedAsItAndAGatewayRouteAfterAPlainOneIs() throws Exception {
        Http http = new Http(port);
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> health = http.get("/health", "key-" + i);
            assertThat(health.statusCode()).as("plain /health #%d", i).isEqualTo(200);
            assertThat(health.body()).isEqualTo("up");
            assertThat(health.headers().firstValue("RateLimit-Policy")).as("no limiter fields on a plain route")
                    .isEmpty();
        }
        HttpResponse<String> login = http.get("/login/x", "key-9");
        assertThat(login.statusCode()).as("login's cap untouched by /health").isEqualTo(200);
        assertThat(login.headers().firstValue("RateLimit-Policy")).hasValueSatisfying(policy ->
                assertThat(policy).contains("per-route"));
        assertThat(statuses("/login/x", 2)).containsExactly(200, 429);
        assertThat(statuses("/after/x", 3)).containsExactly(200, 200, 429);
        assertThat(upstream.hits()).isEqualTo(4);
    }

    @Test
    void aFilterThatCatchesTheRefusalCannotAnswerInsteadOfIt() throws Exception {
        List<String> bodies = new ArrayList<>();
        Http http = new Http(port);
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> response = http.get("/caught/x", "key-" + i);
            statuses.add(response.statusCode());
            bodies.add(response.body());
        }
        assertThat(statuses).containsExactly(200, 200, 429);
        assertThat(bodies.get(2)).contains("\"error\":\"rate_limited\"").doesNotContain("the filter's own answer");
        assertThat(upstream.hits()).isEqualTo(2);
    }

    @Test
    void aGatewayRouteAnsweredAsynchronouslyIsDecidedAndItsRefusalIsThe429() throws Exception {
        List<HttpResponse<String>> responses = responses("/async/x", 4);
        assertThat(responses).extracting(HttpResponse::statusCode).containsExactly(200, 200, 429, 429);
        assertThat(responses.get(3).body()).contains("\"error\":\"rate_limited\"");
        assertThat(responses.get(3).headers().firstValue("Retry-After")).isPresent();
        assertThat(upstream.hits()).isEqualTo(2);
    }

    @Test
    void aFilterThatTriesARefusedChainAgainIsRefusedAgainBeforeTheUpstream() throws Exception {
        assertThat(statuses("/retry/x", 4)).containsExactly(200, 200, 429, 429);
        assertThat(upstream.hits()).as("refused requests never reach the upstream").isEqualTo(2);
    }

    @Test
    void aRefusalAFilterWrapsInItsOwnExceptionIsStillThe429() throws Exception {
        List<HttpResponse<String>> responses = responses("/wrapping/x", 4);
        assertThat(responses).extracting(HttpResponse::statusCode).containsExactly(200, 200, 429, 429);
        assertThat(responses.get(2).body()).contains("\"error\":\"rate_limited\"");
        assertThat(upstream.hits()).isEqualTo(2);
    }

    @Test
    void aForwardFromARouteThatOptedOutIsDecidedOnTheLimitedRouteItReaches() throws Exception {
        assertThat(statuses("/optout/x", 4)).containsExactly(200, 200, 429, 429);
        assertThat(upstream.hits("/limited/forwarded")).isEqualTo(2);
    }

    /**
     * An error page that the catch-all gateway route takes is decided there like any request: of a request that
     * reached no gateway route (a 404), and of a request a limited route admitted whose upstream then failed. When
     * the error route refuses the page of an admitted request, the answer is the failure's own status: that request
     * was let through, and is never told 429 {@code rate_limited}. Before: error pages of admitted requests were
     * either refused with a 429 or (the first fix) not decided at all, so nothing counted their calls upstream.
     * One test, as its steps share the error route's bucket (2 an hour), which the instance remembers refused.
     */
    @Test
    void anErrorPageThatAGatewayRouteTakesIsDecidedLikeAnyRequestAndNeverRefusesAnAdmittedOneWith429()
            throws Exception {
        responses("/boom", 2);
        assertThat(upstream.hits("/error")).as("error pages of requests that reached no route, proxied").isEqualTo(2);
        assertThat(statuses("/boom", 1)).as("the error route's 3rd request in its hour").containsExactly(429);

        List<HttpResponse<String>> failed = responses("/broken/x", 2);
        assertThat(failed).extracting(HttpResponse::statusCode).as("admitted, failed upstream, error page refused")
                .containsOnly(500);
        assertThat(failed).extracting(HttpResponse::body).noneMatch(body -> body.contains("rate_limited"));
        assertThat(upstream.hits("/error")).as("error pages proxied").isEqualTo(2);
        assertThat(statuses("/broken/x", 1)).as("the broken route's 3rd request in its hour").containsExactly(429);
    }

    private List<Integer> statuses(String path, int count) throws Exception {
        return responses(path, count).stream().map(HttpResponse::statusCode).toList();
    }

    private List<HttpResponse<String>> responses(String path, int count) throws Exception {
        Http http = new Http(port);
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            responses.add(http.get(path, "key-" + i));
        }
        return responses;
    }
}

package dev.ratelimiter.autoconfigure;

import java.io.InputStream;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import dev.ratelimiter.autoconfigure.rules.RulesApiRoutes;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RequestPredicate;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.yaml.snakeyaml.Yaml;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where the rules API is mounted: on a management port of its own by default, on the application's port only when
 * switched on (then below the actuator's base path), never when switched off, without the limiter, without Jackson, or
 * beside a user's own routes of that name; and its OpenAPI document has exactly the routes it serves.
 */
class RulesApiManagementContextConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            // as the actuator imports it: after the application's own configuration
            .withConfiguration(AutoConfigurations.of(RateLimitAbuseAutoConfiguration.class,
                    RateLimitAutoConfiguration.class, RateLimitUsageAutoConfiguration.class,
                    RulesApiManagementContextConfiguration.class, UsageApiManagementContextConfiguration.class));

    @SuppressWarnings("unchecked")
    private static WebTestClient client(ApplicationContext context) {
        return WebTestClient.bindToRouterFunction(context.getBean("rateLimitRulesApi", RouterFunction.class)).build();
    }

    @Test
    void onAManagementPortOfItsOwnTheApiIsServedAtItsPath() {
        runner.withPropertyValues("management.server.port=18081").run(context -> {
            WebTestClient api = client(context);
            api.get().uri("/v1/rules").exchange().expectStatus().isOk().expectHeader().valueEquals("ETag", "\"0\"");
            api.put().uri("/v1/rules/made").contentType(MediaType.APPLICATION_JSON).header("If-None-Match", "*")
                    .bodyValue("{\"capacity\": 3, \"refillTokens\": 1, \"refillPeriod\": \"1m\"}").exchange()
                    .expectStatus().isOk().expectHeader().valueEquals("ETag", "\"1\"");
            api.get().uri("/v1/rules/made").exchange().expectStatus().isOk().expectBody()
                    .jsonPath("$.capacity").isEqualTo(3);
        });
    }

    @Test
    void onTheApplicationsPortItIsNotServedUnlessSwitchedOn() {
        runner.run(context -> assertThat(context).doesNotHaveBean("rateLimitRulesApi"));
        runner.withPropertyValues("ratelimit.rules-api.enabled=true").run(context -> {
            WebTestClient api = client(context);
            api.get().uri("/actuator/v1/rules").exchange().expectStatus().isOk();
            api.get().uri("/v1/rules").exchange().expectStatus().isNotFound();
        });
        runner.withPropertyValues("ratelimit.rules-api.enabled=true", "management.endpoints.web.base-path=/manage/",
                "ratelimit.rules-api.path=rules/").run(context ->
                        client(context).get().uri("/manage/rules").exchange().expectStatus().isOk());
    }

    @Test
    void switchedOffOrWithoutTheLimiterItIsNotServed() {
        runner.withPropertyValues("management.server.port=18081", "ratelimit.rules-api.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("rateLimitRulesApi"));
        runner.withPropertyValues("management.server.port=18081", "ratelimit.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("rateLimitRulesApi"));
        runner.withPropertyValues("management.server.port=-1", "ratelimit.rules-api.enabled=true")
                .run(context -> assertThat(context).doesNotHaveBean("rateLimitRulesApi"));
        runner.withPropertyValues("management.server.port=18081", "ratelimit.rule-store.enabled=false")
                .run(context -> client(context).get().uri("/v1/rules").exchange().expectStatus().isNotFound());
    }

    @Test
    void withoutJacksonItIsNotServed() {
        runner.withPropertyValues("management.server.port=18081")
                .withClassLoader(new FilteredClassLoader(JsonMapper.class))
                .run(context -> assertThat(context).doesNotHaveBean("rateLimitRulesApi"));
    }

    @Test
    void aUsersOwnRoutesOfThatNameReplaceOurs() {
        runner.withPropertyValues("management.server.port=18081").withUserConfiguration(OwnRoutes.class)
                .run(context -> client(context).get().uri("/v1/rules").exchange().expectStatus().isEqualTo(418));
    }

    @Test
    void aPathThatIsNoPathStopsTheStartWithTheSettingNamed() {
        runner.withPropertyValues("management.server.port=18081", "ratelimit.rules-api.path=/v1/{rules}")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("ratelimit.rules-api.path"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void theOpenApiDocumentHasEveryRouteServedAndNoOther() throws Exception {
        Map<String, Object> document;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(RulesApiRoutes.OPENAPI)) {
            document = new Yaml().load(in);
        }
        assertThat(document.get("openapi")).isEqualTo("3.1.0");
        Map<String, Set<String>> documented = new TreeMap<>();
        ((Map<String, Map<String, Object>>) document.get("paths")).forEach((path, item) -> item.keySet().stream()
                .filter(key -> !key.equals("parameters"))
                .forEach(method -> documented.computeIfAbsent(path, p -> new TreeSet<>()).add(method)));
        runner.withPropertyValues("management.server.port=18081", "ratelimit.abuse.enabled=true").run(context -> {
            Map<String, Set<String>> served = new TreeMap<>();
            context.getBean("rateLimitRulesApi", RouterFunction.class).accept(new RoutesSeen(served));
            // the usage API, beside the rules API, is in the same document
            context.getBean("rateLimitUsageApi", RouterFunction.class).accept(new RoutesSeen(served));
            assertThat(served).isEqualTo(documented);
        });
    }

    @Test
    void abuseScoresAreServedBelowTheRulesOnlyWhereTheyAreOn() {
        runner.withPropertyValues("management.server.port=18081", "ratelimit.abuse.enabled=true").run(context -> {
            WebTestClient api = client(context);
            api.put().uri("/v1/rules/_abuse-scores/client-1").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"score\": 1}").exchange().expectStatus().isOk().expectBody()
                    .jsonPath("$.score").isEqualTo(1.0).jsonPath("$.source").isEqualTo("operator")
                    .jsonPath("$.factor").value(factor -> assertThat(((Number) factor).doubleValue())
                            .as("the floor, decaying from now").isBetween(0.1, 0.11));
            api.get().uri("/v1/rules/_abuse-scores").exchange().expectStatus().isOk().expectBody()
                    .jsonPath("$.scores[0].client").isEqualTo("client-1");
            api.put().uri("/v1/rules/_abuse-scores/client-1").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"score\": -3}").exchange().expectStatus().isBadRequest().expectBody()
                    .jsonPath("$.error").isEqualTo("invalid_abuse_score");
            api.put().uri("/v1/rules/_abuse-scores/client-1").contentType(MediaType.TEXT_PLAIN)
                    .bodyValue("{\"score\": 1}").exchange().expectStatus().isEqualTo(415);
            api.delete().uri("/v1/rules/_abuse-scores/client-1").exchange().expectStatus().isNoContent();
            api.get().uri("/v1/rules/_abuse-scores/client-1").exchange().expectStatus().isOk().expectBody()
                    .jsonPath("$.factor").isEqualTo(1.0);
        });
        runner.withPropertyValues("management.server.port=18081").run(context -> client(context).get()
                .uri("/v1/rules/_abuse-scores").exchange().expectStatus().isNotFound());
    }

    /** The method and path of every route but the catch-all (a path pattern without a method). */
    private record RoutesSeen(Map<String, Set<String>> served) implements RouterFunctions.Visitor {

        @Override
        public void route(RequestPredicate predicate, HandlerFunction<?> handler) {
            String[] method = new String[1];
            String[] path = new String[1];
            predicate.accept(new PredicateParts(method, path));
            if (method[0] != null) {
                served.computeIfAbsent(path[0], p -> new TreeSet<>()).add(method[0]);
            }
        }

        @Override
        public void startNested(RequestPredicate predicate) {
        }

        @Override
        public void endNested(RequestPredicate predicate) {
        }

        @Override
        public void resources(java.util.function.Function<org.springframework.web.reactive.function.server.ServerRequest,
                Mono<org.springframework.core.io.Resource>> lookup) {
        }

        @Override
        public void attributes(Map<String, Object> attributes) {
        }

        @Override
        public void unknown(RouterFunction<?> routerFunction) {
        }
    }

    private record PredicateParts(String[] method, String[] path) implements RequestPredicates.Visitor {

        @Override
        public void method(Set<HttpMethod> methods) {
            method[0] = methods.iterator().next().name().toLowerCase();
        }

        @Override
        public void path(String pattern) {
            path[0] = pattern;
        }

        @Override
        public void pathExtension(String extension) {
        }

        @Override
        public void header(String name, String value) {
        }

        @Override
        public void queryParam(String name, String value) {
        }

        @Override
        public void version(String version) {
        }

        @Override
        public void startAnd() {
        }

        @Override
        public void and() {
        }

        @Override
        public void endAnd() {
        }

        @Override
        public void startOr() {
        }

        @Override
        public void or() {
        }

        @Override
        public void endOr() {
        }

        @Override
        public void startNegate() {
        }

        @Override
        public void endNegate() {
        }

        @Override
        public void unknown(RequestPredicate predicate) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnRoutes {

        @Bean
        RouterFunction<ServerResponse> rateLimitRulesApi() {
            return RouterFunctions.route(RequestPredicates.GET("/v1/rules"), request -> ServerResponse.status(418).build());
        }
    }
}

package dev.ratelimiter.mvc;

import java.util.Map;

import dev.ratelimiter.gateway.RouteMetadata;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions;
import org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions;
import org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which gateway route a Java route's attributes belong to. Crediting an attribute to the wrong route is the failure
 * that matters: {@code ratelimit-enabled: false} on the wrong route takes that route out of the limiter.
 */
class RouterFunctionAttributesTest {

    @Test
    void eachGatewayRouteHasTheAttributesOfItsOwnBuilder() {
        RouterFunction<ServerResponse> routes = gateway("reports", "/reports/**")
                .withAttribute(RouteMetadata.ROUTE_CLASS, "reports").withAttribute(RouteMetadata.COST, 2).build()
                .and(gateway("open", "/open/**").withAttribute(RouteMetadata.ENABLED, false).build())
                .and(gateway("plain", "/plain/**").build());
        Map<String, Map<String, Object>> attributes = RouterFunctionAttributes.of(routes);
        assertThat(attributes.get("reports")).containsExactlyInAnyOrderEntriesOf(
                Map.of(RouteMetadata.ROUTE_CLASS, "reports", RouteMetadata.COST, 2));
        assertThat(attributes.get("open")).containsExactlyEntriesOf(Map.of(RouteMetadata.ENABLED, false));
        assertThat(attributes.get("plain")).isEmpty();
    }

    @Test
    void aPlainRouteJoinedAfterAGatewayRouteDoesNotOptThatRouteOut() {
        RouterFunction<ServerResponse> routes = gateway("limited", "/limited/**").build()
                .and(RouterFunctions.route().GET("/health", request -> ServerResponse.ok().build())
                        .withAttribute(RouteMetadata.ENABLED, false).build());
        assertThat(RouterFunctionAttributes.of(routes).get("limited")).isEmpty();
    }

    @Test
    void anAttributeAroundSeveralRoutesIsCreditedToNone() {
        RouterFunction<ServerResponse> routes = gateway("a", "/a/**").build().and(gateway("b", "/b/**").build())
                .withAttribute(RouteMetadata.ENABLED, false);
        Map<String, Map<String, Object>> attributes = RouterFunctionAttributes.of(routes);
        assertThat(attributes.get("a")).isEmpty();
        assertThat(attributes.get("b")).isEmpty();
    }

    @Test
    void onlyTheFirstRouteOfABuilderNamesTheGatewayRoutesAttributes() {
        RouterFunction<ServerResponse> routes = GatewayRouterFunctions.route("two")
                .GET("/two/**", HandlerFunctions.http()).withAttribute(RouteMetadata.ROUTE_CLASS, "reads")
                .POST("/two/**", HandlerFunctions.http()).withAttribute(RouteMetadata.ENABLED, false)
                .before(BeforeFilterFunctions.uri("http://127.0.0.1:9")).build()
                .and(gateway("next", "/next/**").build());
        Map<String, Map<String, Object>> attributes = RouterFunctionAttributes.of(routes);
        assertThat(attributes.get("two")).containsExactlyEntriesOf(Map.of(RouteMetadata.ROUTE_CLASS, "reads"));
        assertThat(attributes.get("next")).isEmpty();
    }

    @Test
    void nestedRoutesInsideAGatewayRouteKeepItsAttributes() {
        RouterFunction<ServerResponse> routes = GatewayRouterFunctions.route("nested")
                .nest(RequestPredicates.path("/n"),
                        inner -> inner.GET("/x", HandlerFunctions.http()))
                .withAttribute(RouteMetadata.COST, 3).build();
        assertThat(RouterFunctionAttributes.of(routes).get("nested"))
                .containsExactlyEntriesOf(Map.of(RouteMetadata.COST, 3));
    }

    private static RouterFunctions.Builder gateway(String id, String path) {
        return GatewayRouterFunctions.route(id).GET(path, HandlerFunctions.http())
                .before(BeforeFilterFunctions.uri("http://127.0.0.1:9"));
    }
}

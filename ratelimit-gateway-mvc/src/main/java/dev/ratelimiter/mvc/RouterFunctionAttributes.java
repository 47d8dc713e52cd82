package dev.ratelimiter.mvc;

import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.core.io.Resource;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.RequestPredicate;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * The attributes a {@code RouterFunction} bean's gateway routes were built with, by route id: the metadata of routes
 * written in Java ({@code GatewayRouterFunctions.route("id")…withAttribute("ratelimit-enabled", false).build()}),
 * which have no route properties to read it from.
 *
 * <p>Read with a {@link RouterFunctions.Visitor}: Gateway Server MVC wraps each route in the attribute
 * {@value MvcUtils#GATEWAY_ROUTE_ID_ATTR}, and the builder's own {@code withAttribute} wraps the route inside it, so
 * every attribute map seen after a route id and before the next one belongs to that route.
 */
final class RouterFunctionAttributes implements RouterFunctions.Visitor {

    private final Map<String, Map<String, Object>> byRoute = new HashMap<>();
    private Map<String, Object> current;

    private RouterFunctionAttributes() {
    }

    /** The attributes of every gateway route in {@code routes}, by route id, the route id attribute left out. */
    static Map<String, Map<String, Object>> of(RouterFunction<?> routes) {
        RouterFunctionAttributes visitor = new RouterFunctionAttributes();
        routes.accept(visitor);
        visitor.byRoute.replaceAll((id, attributes) -> Collections.unmodifiableMap(attributes));
        return Map.copyOf(visitor.byRoute);
    }

    @Override
    public void attributes(Map<String, Object> attributes) {
        Object routeId = attributes.get(MvcUtils.GATEWAY_ROUTE_ID_ATTR);
        if (routeId != null) {
            current = byRoute.computeIfAbsent(routeId.toString(), id -> new LinkedHashMap<>());
        }
        if (current != null) {
            attributes.forEach((name, value) -> {
                if (!MvcUtils.GATEWAY_ROUTE_ID_ATTR.equals(name) && value != null) {
                    current.put(name, value);
                }
            });
        }
    }

    @Override
    public void startNested(RequestPredicate predicate) {
    }

    @Override
    public void endNested(RequestPredicate predicate) {
    }

    @Override
    public void route(RequestPredicate predicate, HandlerFunction<?> handlerFunction) {
    }

    @Override
    public void resources(Function<ServerRequest, Optional<Resource>> lookupFunction) {
    }

    @Override
    public void unknown(RouterFunction<?> routerFunction) {
    }
}

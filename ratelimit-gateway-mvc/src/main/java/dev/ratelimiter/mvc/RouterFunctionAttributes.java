package dev.ratelimiter.mvc;

import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

import dev.ratelimiter.gateway.RouteMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.core.io.Resource;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.RequestPredicate;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * The attributes a {@code RouterFunction} bean's gateway routes were built with, by route id: the metadata of routes
 * written in Java ({@code GatewayRouterFunctions.route("id").GET(…).withAttribute("ratelimit-enabled", false)
 * .build()}), which have no route properties to read it from.
 *
 * <p>Read with a {@link RouterFunctions.Visitor}, which sees each attribute map before the routes it wraps but is
 * never told where that wrapping ends. What is known: Gateway Server MVC wraps a gateway route's whole builder in the
 * attribute {@value MvcUtils#GATEWAY_ROUTE_ID_ATTR}, and the builder's {@code withAttribute} wraps its route inside
 * that. So the maps between a route id and the first route after it are that gateway route's, for certain. Any map
 * seen elsewhere (an attribute on a builder's second route, on a plain WebMvc.fn route joined with {@code .and()},
 * or around several routes) could belong to a route other than the one before it; crediting it there could opt the
 * wrong route out of the limiter, so it is not credited, and a rate-limit key in it is warned about once.
 */
final class RouterFunctionAttributes implements RouterFunctions.Visitor {

    private static final Logger logger = LoggerFactory.getLogger(RouterFunctionAttributes.class);
    private static final Set<String> LIMITER_KEYS = Set.of(RouteMetadata.ROUTE_CLASS, RouteMetadata.COST,
            RouteMetadata.ENABLED);

    private final Map<String, Map<String, Object>> byRoute = new HashMap<>();
    private final Set<String> ignoredKeys = new TreeSet<>();
    /** The gateway route whose first route has not been seen yet; null outside that window. */
    private Map<String, Object> open;

    private RouterFunctionAttributes() {
    }

    /** The attributes of every gateway route in {@code routes}, by route id, the route id attribute left out. */
    static Map<String, Map<String, Object>> of(RouterFunction<?> routes) {
        RouterFunctionAttributes visitor = new RouterFunctionAttributes();
        routes.accept(visitor);
        if (!visitor.ignoredKeys.isEmpty()) {
            logger.warn("Route attributes {} in {} are not on a gateway route's first route (they are on a later "
                    + "route of one builder, on a plain WebMvc.fn route, or around several routes), so the limiter "
                    + "cannot tell which route they are for and ignores them. Set them with withAttribute right after "
                    + "the gateway route's first GET/POST/route call, or in "
                    + "spring.cloud.gateway.server.webmvc.routes[].metadata.", visitor.ignoredKeys, routes);
        }
        visitor.byRoute.replaceAll((id, attributes) -> Collections.unmodifiableMap(attributes));
        return Map.copyOf(visitor.byRoute);
    }

    @Override
    public void attributes(Map<String, Object> attributes) {
        Object routeId = attributes.get(MvcUtils.GATEWAY_ROUTE_ID_ATTR);
        if (routeId != null) {
            open = byRoute.computeIfAbsent(routeId.toString(), id -> new LinkedHashMap<>());
        }
        attributes.forEach((name, value) -> {
            if (MvcUtils.GATEWAY_ROUTE_ID_ATTR.equals(name) || value == null) {
                return;
            }
            if (open != null) {
                open.put(name, value);
            }
            else if (LIMITER_KEYS.contains(name)) {
                ignoredKeys.add(name);
            }
        });
    }

    @Override
    public void route(RequestPredicate predicate, HandlerFunction<?> handlerFunction) {
        open = null;
    }

    @Override
    public void resources(Function<ServerRequest, Optional<Resource>> lookupFunction) {
        open = null;
    }

    @Override
    public void unknown(RouterFunction<?> routerFunction) {
        open = null;
    }

    @Override
    public void startNested(RequestPredicate predicate) {
    }

    @Override
    public void endNested(RequestPredicate predicate) {
    }
}

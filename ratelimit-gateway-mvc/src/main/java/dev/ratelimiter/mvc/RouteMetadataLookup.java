package dev.ratelimiter.mvc;

import java.util.Map;
import java.util.function.Function;

import org.springframework.cloud.gateway.server.mvc.config.GatewayMvcProperties;
import org.springframework.cloud.gateway.server.mvc.config.RouteProperties;

/**
 * The metadata of a route configured under {@code spring.cloud.gateway.server.webmvc.routes} (list or map form), by
 * its id. Gateway Server MVC binds that metadata but does not carry it to the request, so it is read here, from the
 * same properties; routes from {@code RouterFunction} beans have none.
 */
public final class RouteMetadataLookup implements Function<String, Map<String, Object>> {

    private final GatewayMvcProperties properties;

    public RouteMetadataLookup(GatewayMvcProperties properties) {
        this.properties = properties;
    }

    @Override
    public Map<String, Object> apply(String routeId) {
        RouteProperties route = properties.getRoutesMap().get(routeId);
        if (route == null) {
            route = properties.getRoutes().stream().filter(candidate -> routeId.equals(candidate.getId())).findFirst()
                    .orElse(null);
        }
        Map<String, Object> metadata = route != null ? route.getMetadata() : null;
        return metadata != null ? metadata : Map.of();
    }
}

package dev.ratelimiter.mvc;

import java.util.function.Supplier;

import org.springframework.test.context.DynamicPropertyRegistry;

/** Gateway Server MVC routes for the tests, registered as {@code spring.cloud.gateway.server.webmvc} properties. */
final class MvcRoutes {

    private MvcRoutes() {
    }

    /** Route {@code index}: requests matching {@code path} go to {@code uri}; returns the property prefix. */
    static String route(DynamicPropertyRegistry registry, int index, String id, String path, Supplier<Object> uri) {
        String prefix = "spring.cloud.gateway.server.webmvc.routes[" + index + "].";
        registry.add(prefix + "id", () -> id);
        registry.add(prefix + "uri", uri);
        registry.add(prefix + "predicates[0]", () -> "Path=" + path);
        return prefix;
    }
}

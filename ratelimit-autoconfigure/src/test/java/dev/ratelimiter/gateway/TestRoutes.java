package dev.ratelimiter.gateway;

import java.util.function.Supplier;

import org.springframework.test.context.DynamicPropertyRegistry;

/** Gateway routes for integration tests, registered as Spring Cloud Gateway properties. */
public final class TestRoutes {

    private TestRoutes() {
    }

    /** Route {@code index}: requests matching {@code path} go to {@code uri}. */
    public static void route(DynamicPropertyRegistry registry, int index, String id, String path, Supplier<Object> uri) {
        String prefix = "spring.cloud.gateway.server.webflux.routes[" + index + "].";
        registry.add(prefix + "id", () -> id);
        registry.add(prefix + "uri", uri);
        registry.add(prefix + "predicates[0]", () -> "Path=" + path);
    }
}

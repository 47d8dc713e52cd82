package dev.ratelimiter.mvc;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.DefaultResourceLoader;

/**
 * An MVC gateway started by the test itself, for settings a class's shared context cannot vary (a servlet path, a
 * context path, what fails the start-up): on a random loopback port, over the fixture's Redis, with route {@code api}
 * ({@code /api/**}) to the fixture's stub and a tier that refuses nothing.
 */
final class MvcGatewayApplications {

    private MvcGatewayApplications() {
    }

    /** Started with these properties over the defaults; the caller closes it. */
    static ConfigurableApplicationContext start(MvcGatewayFixture fixture, String... properties) {
        return builder(fixture, properties).run();
    }

    /**
     * As an application that has no Spring Security of its own, as the MVC starter brings none (this module's tests
     * have it for the resource server).
     */
    static ConfigurableApplicationContext startWithoutSpringSecurity(MvcGatewayFixture fixture,
            String... properties) {
        return builder(fixture, properties)
                .resourceLoader(new DefaultResourceLoader(new FilteredClassLoader("org.springframework.security")))
                .run();
    }

    private static SpringApplicationBuilder builder(MvcGatewayFixture fixture, String... properties) {
        List<String> all = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1",
                "spring.jmx.enabled=false", "spring.data.redis.url=" + fixture.redis().url(),
                "ratelimit.store.type=redis", "spring.cloud.gateway.server.webmvc.routes[0].id=api",
                "spring.cloud.gateway.server.webmvc.routes[0].uri=" + fixture.upstream().uri(),
                "spring.cloud.gateway.server.webmvc.routes[0].predicates[0]=Path=/api/**",
                "ratelimit.default-tier=free", "ratelimit.tiers.free.limits.default.capacity=100000",
                "ratelimit.tiers.free.limits.default.refill-tokens=100000"));
        all.addAll(List.of(properties));
        return new SpringApplicationBuilder(TestMvcGatewayApplication.class).properties(all.toArray(String[]::new));
    }

    /** The port the server, or with {@code management.server.port} the management server, listens on. */
    static int port(ConfigurableApplicationContext context, boolean management) {
        return context.getEnvironment().getRequiredProperty(management ? "local.management.port" : "local.server.port",
                Integer.class);
    }
}

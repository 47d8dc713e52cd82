package dev.ratelimiter.mvc;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.testsupport.PropertyArguments;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.context.ApplicationContextInitializer;
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
        return start(fixture, List.of(), properties);
    }

    /** As {@link #start(MvcGatewayFixture, String...)}, these initializers run before the context is refreshed. */
    static ConfigurableApplicationContext start(MvcGatewayFixture fixture,
            List<ApplicationContextInitializer<?>> initializers, String... properties) {
        return new SpringApplicationBuilder(TestMvcGatewayApplication.class)
                .initializers(initializers.toArray(ApplicationContextInitializer[]::new))
                .run(arguments(fixture, properties));
    }

    /**
     * As an application without Spring Security's classes at all (the MVC starter brings them; this module's tests
     * have them too).
     */
    static ConfigurableApplicationContext startWithoutSpringSecurity(MvcGatewayFixture fixture,
            String... properties) {
        return new SpringApplicationBuilder(TestMvcGatewayApplication.class)
                .resourceLoader(new DefaultResourceLoader(new FilteredClassLoader("org.springframework.security")))
                .run(arguments(fixture, properties));
    }

    /** As command-line arguments: a test's own settings win over the suite's application.properties. */
    private static String[] arguments(MvcGatewayFixture fixture, String... properties) {
        List<String> all = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1",
                "spring.jmx.enabled=false", "spring.data.redis.url=" + fixture.redis().url(),
                "ratelimit.store.type=redis", "spring.cloud.gateway.server.webmvc.routes[0].id=api",
                "spring.cloud.gateway.server.webmvc.routes[0].uri=" + fixture.upstream().uri(),
                "spring.cloud.gateway.server.webmvc.routes[0].predicates[0]=Path=/api/**",
                "ratelimit.default-tier=free", "ratelimit.tiers.free.limits.default.capacity=100000",
                "ratelimit.tiers.free.limits.default.refill-tokens=100000"));
        all.addAll(List.of(properties));
        return PropertyArguments.of(all);
    }

    /** The port the server, or with {@code management.server.port} the management server, listens on. */
    static int port(ConfigurableApplicationContext context, boolean management) {
        return context.getEnvironment().getRequiredProperty(management ? "local.management.port" : "local.server.port",
                Integer.class);
    }
}

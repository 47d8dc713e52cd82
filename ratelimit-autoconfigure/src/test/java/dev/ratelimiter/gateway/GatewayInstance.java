package dev.ratelimiter.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.testsupport.PropertyArguments;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/** A test gateway started by hand, for tests that run several instances or drive one's lifecycle themselves. */
final class GatewayInstance {

    private GatewayInstance() {
    }

    /**
     * Starts the test gateway on a free port with one route {@code /api/**} to {@code upstream}, Redis at
     * {@code redisUrl}, and the given properties on top.
     */
    static ConfigurableApplicationContext start(String redisUrl, String upstream, String... properties) {
        return start(List.of(), redisUrl, upstream, properties);
    }

    /** As {@link #start(String, String, String...)}, with these configurations beside the test gateway's. */
    static ConfigurableApplicationContext start(List<Class<?>> configurations, String redisUrl, String upstream,
            String... properties) {
        return start(configurations, List.of(), redisUrl, upstream, properties);
    }

    /**
     * As {@link #start(List, String, String, String...)}, with these initializers run before the context is
     * refreshed (e.g. {@code KubernetesPod}).
     */
    static ConfigurableApplicationContext start(List<Class<?>> configurations,
            List<ApplicationContextInitializer<?>> initializers, String redisUrl, String upstream,
            String... properties) {
        List<String> all = new ArrayList<>(List.of("server.port=0",
                "spring.data.redis.url=" + redisUrl,
                "spring.cloud.gateway.server.webflux.routes[0].id=api",
                "spring.cloud.gateway.server.webflux.routes[0].uri=" + upstream,
                "spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/api/**"));
        all.addAll(List.of(properties));
        List<Class<?>> sources = new ArrayList<>(List.of(TestGatewayApplication.class));
        sources.addAll(configurations);
        return new SpringApplicationBuilder(sources.toArray(Class<?>[]::new))
                .initializers(initializers.toArray(ApplicationContextInitializer[]::new)).run(PropertyArguments.of(all));
    }

    /**
     * Waits (at most 20 s) until the instance's limiter has connected to Redis: before, decisions take the local
     * failure mode, whose buckets are larger than the rule's.
     */
    static void awaitRedis(ConfigurableApplicationContext context) {
        LimiterConnection connection = context.getBean(LimiterConnection.class);
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!connection.connected() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
        if (!connection.connected()) {
            throw new AssertionError("the limiter did not connect to Redis within 20 s");
        }
    }

    /** The port the instance's web server listens on now. */
    static int port(ConfigurableApplicationContext context) {
        return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }

    /** A client of the instance's web server, on the port it listens on now (it changes when it is restarted). */
    static WebTestClient client(ConfigurableApplicationContext context) {
        return client(Integer.parseInt(context.getEnvironment().getProperty("local.server.port")));
    }

    /** A client of the gateway on {@code port} of this host, waiting at most 10 s for an answer. */
    static WebTestClient client(int port) {
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(10))
                .build();
    }
}

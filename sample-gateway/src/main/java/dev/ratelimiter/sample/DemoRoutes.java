package dev.ratelimiter.sample;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Routes {@code /api/**} to the demo upstream. Routes to real APIs are usually written in
 * {@code application.yml} instead; this one is code only because the demo upstream's port is chosen at start.
 */
@Configuration(proxyBeanMethods = false)
class DemoRoutes {

    @Bean(destroyMethod = "close")
    DemoUpstream demoUpstream(@Value("${demo.upstream.port:0}") int port) {
        return new DemoUpstream(port);
    }

    @Bean
    RouteLocator demoApiRoute(RouteLocatorBuilder routes, DemoUpstream upstream) {
        return routes.routes()
                .route("demo-api", route -> route.path("/api/**")
                        .metadata("route-class", "default")
                        .metadata("ratelimit-priority", "critical")
                        .uri(upstream.uri()))
                .route("demo-reports", route -> route.path("/reports/**")
                        .metadata("route-class", "default")
                        .metadata("ratelimit-priority", "background")
                        .uri(upstream.uri()))
                .build();
    }
}

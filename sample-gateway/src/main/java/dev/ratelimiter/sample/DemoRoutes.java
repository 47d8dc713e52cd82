package dev.ratelimiter.sample;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.BooleanSpec;
import org.springframework.cloud.gateway.route.builder.GatewayFilterSpec;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.cloud.gateway.route.builder.UriSpec;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/**
 * Routes {@code /api/**}, {@code /reports/**}, {@code /login/**}, {@code /v1/chat/completions} and (with a JWT, see {@link DemoSecurity})
 * {@code /secure/**} to the demo upstream. Routes to real APIs are
 * usually written in {@code application.yml} instead; these are code only because the demo upstream's port is chosen
 * at start.
 *
 * <p>Two hooks for the scenario runner ({@code ratelimit-scenarios}): {@code demo.upstream.uri} points every route at
 * another upstream instead of the built-in one, and {@code demo.gateway-rate-limiter.replenish-rate} /
 * {@code burst-capacity} (both &gt; 0) put Spring Cloud Gateway's own {@code RequestRateLimiter} with its
 * {@code RedisRateLimiter} on {@code /api/**} and {@code /login/**}, keyed by the {@code X-API-Key} header (bean
 * {@code apiKeyResolver}) — to compare it with ours, run with {@code ratelimit.enabled=false}. It is set here and not
 * through {@code spring.cloud.gateway.server.webflux.default-filters} because the gateway applies default filters
 * to routes defined in properties only, never to routes built in code like these.
 */
@Configuration(proxyBeanMethods = false)
class DemoRoutes {

    @Bean(destroyMethod = "close")
    DemoUpstream demoUpstream(@Value("${demo.upstream.port:0}") int port) {
        return new DemoUpstream(port);
    }

    /** The client's API key, for Spring Cloud Gateway's {@code RequestRateLimiter} (unused by our limiter). */
    @Bean
    KeyResolver apiKeyResolver() {
        return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-API-Key"));
    }

    @Bean
    RouteLocator demoApiRoute(RouteLocatorBuilder routes, DemoUpstream upstream, KeyResolver apiKeyResolver,
            @Value("${demo.upstream.uri:}") String upstreamUri,
            @Value("${demo.gateway-rate-limiter.replenish-rate:0}") int replenishRate,
            @Value("${demo.gateway-rate-limiter.burst-capacity:0}") int burstCapacity) {
        String uri = upstreamUri.isBlank() ? upstream.uri() : upstreamUri;
        boolean gatewayLimiter = replenishRate > 0 && burstCapacity > 0;
        return routes.routes()
                .route("demo-api", route -> limited(route.path("/api/**"), gatewayLimiter, replenishRate,
                        burstCapacity, apiKeyResolver)
                        .metadata("route-class", "default")
                        .metadata("ratelimit-priority", "critical")
                        .uri(uri))
                .route("demo-reports", route -> route.path("/reports/**")
                        .metadata("route-class", "default")
                        .metadata("ratelimit-priority", "background")
                        .uri(uri))
                .route("demo-login", route -> limited(route.path("/login/**"), gatewayLimiter, replenishRate,
                        burstCapacity, apiKeyResolver)
                        .metadata("route-class", "login")
                        .metadata("ratelimit-priority", "critical")
                        .uri(uri))
                // the LLM-like API (DemoLlmApi): charged the tokens each answer reports (rule llm-tokens)
                .route("demo-llm", route -> route.path("/v1/chat/completions")
                        .metadata("route-class", "llm")
                        .metadata("ratelimit-priority", "critical")
                        .uri(uri))
                // JWT only (DemoSecurity): the caller's key, tenant and tier come from the token's claims
                .route("demo-secure", route -> route.path("/secure/**")
                        .filters(filters -> filters.rewritePath("/secure/(?<rest>.*)", "/api/${rest}"))
                        .metadata("route-class", "default")
                        .metadata("ratelimit-priority", "critical")
                        .uri(uri))
                .build();
    }

    private static UriSpec limited(BooleanSpec route, boolean gatewayLimiter, int replenishRate, int burstCapacity,
            KeyResolver keyResolver) {
        if (!gatewayLimiter) {
            return route;
        }
        return route.filters(filters -> withGatewayLimiter(filters, replenishRate, burstCapacity, keyResolver));
    }

    private static GatewayFilterSpec withGatewayLimiter(GatewayFilterSpec filters, int replenishRate,
            int burstCapacity, KeyResolver keyResolver) {
        return filters.requestRateLimiter()
                .rateLimiter(RedisRateLimiter.class, (RedisRateLimiter.Config config) -> config
                        .setReplenishRate(replenishRate)
                        .setBurstCapacity(burstCapacity))
                .configure(config -> config.setKeyResolver(keyResolver));
    }
}

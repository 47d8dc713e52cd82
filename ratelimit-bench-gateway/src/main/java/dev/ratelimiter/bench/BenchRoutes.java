package dev.ratelimiter.bench;

import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.cloud.gateway.filter.ratelimit.Bucket4jRateLimiter;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.GatewayFilterSpec;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/**
 * Two routes to the same upstream: {@code /bench/**} under a limit no client reaches ({@code bench.rate} per second,
 * bursts of {@code bench.burst}: the allowed path) and {@code /deny/**} at {@code bench.deny-rate} per second, bursts
 * of as many (the refused path). For the peers, Spring Cloud Gateway's {@code RequestRateLimiter} on both
 * ({@code scg-redis}: {@link RedisRateLimiter}; {@code scg-bucket4j}: {@link Bucket4jRateLimiter}), keyed by
 * {@code X-API-Key}. For {@code off}, {@code exact} and {@code local} the routes have no filter: ours is a global
 * filter, configured by {@code ratelimit.*} (the runner passes the same limits).
 */
@Configuration(proxyBeanMethods = false)
class BenchRoutes {

    @Bean
    KeyResolver apiKeyResolver() {
        return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-API-Key"));
    }

    @Bean
    RouteLocator benchRoute(RouteLocatorBuilder routes, KeyResolver apiKeyResolver,
            @Value("${bench.upstream}") String upstream, @Value("${bench.limiter:off}") String limiter,
            @Value("${bench.rate:1000000000}") int rate, @Value("${bench.burst:1000000000}") int burst,
            @Value("${bench.deny-rate:10}") int denyRate) {
        return routes.routes()
                .route("bench", route -> route.path("/bench/**")
                        .filters(filters -> withPeer(filters, limiter, rate, burst, apiKeyResolver))
                        .uri(upstream))
                .route("deny", route -> route.path("/deny/**")
                        .filters(filters -> withPeer(filters, limiter, denyRate, denyRate, apiKeyResolver))
                        .uri(upstream))
                .build();
    }

    private static GatewayFilterSpec withPeer(GatewayFilterSpec filters, String limiter, int rate, int burst,
            KeyResolver keyResolver) {
        return switch (limiter) {
            case "scg-redis" -> filters.requestRateLimiter()
                    .rateLimiter(RedisRateLimiter.class, (RedisRateLimiter.Config config) -> config
                            .setReplenishRate(rate).setBurstCapacity(burst))
                    .configure(config -> config.setKeyResolver(keyResolver));
            case "scg-bucket4j" -> filters.requestRateLimiter()
                    .rateLimiter(Bucket4jRateLimiter.class, (Bucket4jRateLimiter.Config config) -> config
                            .setCapacity(burst).setRefillTokens((long) rate).setRefillPeriod(Duration.ofSeconds(1)))
                    .configure(config -> config.setKeyResolver(keyResolver));
            case "off", "exact", "local" -> filters;
            default -> throw new IllegalArgumentException("bench.limiter must be off, scg-redis, scg-bucket4j, exact or "
                    + "local, but was '" + limiter + "'");
        };
    }
}

package dev.ratelimiter.gateway;

import java.time.Clock;
import java.util.Map;
import java.util.Optional;

import dev.ratelimiter.core.Decision;
import dev.ratelimiter.core.LimitPlan;
import dev.ratelimiter.core.RateLimitEvaluator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Decides every routed request before it is forwarded: allowed requests go on with the rate-limit headers
 * on their response; denied ones are answered with 429 here and never reach the upstream.
 *
 * <p>Route metadata {@value #ROUTE_CLASS_METADATA} names the route class (default
 * {@value LimitPlan#DEFAULT_ROUTE_CLASS}); {@value #COST_METADATA} the tokens a request costs (default 1).
 */
public final class RateLimitFilter implements GlobalFilter, Ordered {

    public static final String ROUTE_CLASS_METADATA = "route-class";
    public static final String COST_METADATA = "ratelimit-cost";

    private static final Logger logger = LoggerFactory.getLogger(RateLimitFilter.class);

    private final RateLimitEvaluator evaluator;
    private final MissingApiKeyPolicy missingApiKey;
    private final Clock clock;
    private final int order;

    public RateLimitFilter(RateLimitEvaluator evaluator, MissingApiKeyPolicy missingApiKey, Clock clock, int order) {
        this.evaluator = evaluator;
        this.missingApiKey = missingApiKey;
        this.clock = clock;
        this.order = order;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
        String apiKey = exchange.getRequest().getHeaders().getFirst(missingApiKey.headerName());
        if (apiKey == null || apiKey.isBlank()) {
            return missingApiKey.reject()
                    ? ProblemResponses.missingApiKey(exchange, missingApiKey.status(), missingApiKey.headerName())
                    : chain.filter(exchange);
        }
        Map<String, Object> metadata = routeMetadata(exchange);
        String routeClass = String.valueOf(metadata.getOrDefault(ROUTE_CLASS_METADATA, LimitPlan.DEFAULT_ROUTE_CLASS));
        int cost = cost(metadata);
        return evaluator.check(apiKey, routeClass, cost)
                .map(Optional::of)
                .defaultIfEmpty(Optional.empty())
                .onErrorResume(failure -> {
                    // The store adapter already falls back on store failures; reaching here is a bug, and a
                    // limiter bug must not become an outage of the API behind it.
                    logger.error("Rate-limit decision failed; letting the request through", failure);
                    return Mono.just(Optional.empty());
                })
                .flatMap(decision -> decision.isPresent() ? apply(decision.get(), exchange, chain) : chain.filter(exchange));
    }

    private Mono<Void> apply(Decision decision, ServerWebExchange exchange, GatewayFilterChain chain) {
        RateLimitHeaders.write(exchange.getResponse().getHeaders(), decision, clock.instant().getEpochSecond());
        return decision.allowed() ? chain.filter(exchange) : ProblemResponses.rateLimited(exchange, decision);
    }

    private static Map<String, Object> routeMetadata(ServerWebExchange exchange) {
        Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
        return route != null ? route.getMetadata() : Map.of();
    }

    private static int cost(Map<String, Object> metadata) {
        Object value = metadata.get(COST_METADATA);
        if (value == null) {
            return 1;
        }
        try {
            int cost = value instanceof Number number ? number.intValue() : Integer.parseInt(value.toString().trim());
            return Math.max(1, cost);
        }
        catch (NumberFormatException ex) {
            logger.warn("Route metadata {}='{}' is not a whole number; using cost 1", COST_METADATA, value);
            return 1;
        }
    }

    @Override
    public int getOrder() {
        return order;
    }
}

package dev.ratelimiter.gateway.webflux;

import java.time.Duration;
import java.util.Map;

import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.Priority;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.PriorityChoice;
import dev.ratelimiter.gateway.RateLimitHeaders;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/**
 * Priority load shedding in front of the upstreams that have a shedder: a request is let through, with a ticket
 * counting it in progress until its response ends, or answered 503 with Retry-After here.
 *
 * <p>It runs after the rate limiter (a client over its own limit is told so with 429 first), as in Stripe's
 * published order: rate limits, concurrency limits, then load shedders.
 *
 * <p>A request's priority comes from its route's {@value #PRIORITY_METADATA} metadata, else the default. A priority
 * header may lower it (a client can declare its own work background); it may raise it only when the header is
 * trusted (set by something in front of the gateway that clients cannot reach around). An unknown value in the
 * header is ignored.
 */
public final class LoadSheddingFilter implements GlobalFilter, Ordered {

    public static final String PRIORITY_METADATA = PriorityChoice.PRIORITY_METADATA;

    private final Map<String, LoadShedder> byRoute;
    private final VerdictListener listener;
    private final PriorityChoice priorities;
    private final long retryAfterSeconds;
    private final int order;
    private final RefusalWriter refusalWriter;

    public LoadSheddingFilter(Map<String, LoadShedder> byRoute, VerdictListener listener, Priority defaultPriority,
            String priorityHeader, boolean headerTrusted, Duration retryAfter, int order) {
        this(byRoute, listener, defaultPriority, priorityHeader, headerTrusted, retryAfter, order,
                RefusalWriter.defaults());
    }

    /** @param refusalWriter writes the 503 of a shed request */
    public LoadSheddingFilter(Map<String, LoadShedder> byRoute, VerdictListener listener, Priority defaultPriority,
            String priorityHeader, boolean headerTrusted, Duration retryAfter, int order,
            RefusalWriter refusalWriter) {
        this.byRoute = Map.copyOf(byRoute);
        this.listener = listener;
        this.priorities = new PriorityChoice(defaultPriority, priorityHeader, headerTrusted);
        this.retryAfterSeconds = Math.max(1, RateLimitHeaders.ceilSeconds(retryAfter));
        this.order = order;
        this.refusalWriter = refusalWriter;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
        Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
        LoadShedder shedder = route == null ? null : byRoute.get(route.getId());
        if (shedder == null) {
            return chain.filter(exchange);
        }
        Priority priority = priorityOf(route, exchange);
        LoadShedder.Ticket ticket = shedder.tryAcquire(priority);
        if (ticket == null) {
            RequestAttributes request = RateLimitFilter.attributesOf(exchange, route);
            listener.onShed(request, priority, shedder.upstream());
            return refusalWriter.overloaded(exchange, request, shedder.upstream(), priority.label(),
                    retryAfterSeconds);
        }
        return chain.filter(exchange).doFinally(signal -> {
            HttpStatusCode status = exchange.getResponse().getStatusCode();
            boolean overloaded = signal == SignalType.ON_ERROR
                    || status != null && (status.value() == 503 || status.value() == 504);
            ticket.release(overloaded, signal != SignalType.CANCEL);
        });
    }

    Priority priorityOf(Route route, ServerWebExchange exchange) {
        String header = priorities.header();
        return priorities.choose(route.getId(), route.getMetadata().get(PRIORITY_METADATA),
                header == null ? null : exchange.getRequest().getHeaders().getFirst(header));
    }

    @Override
    public int getOrder() {
        return order;
    }
}

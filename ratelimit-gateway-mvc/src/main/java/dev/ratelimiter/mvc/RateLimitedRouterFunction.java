package dev.ratelimiter.mvc;

import java.util.Map;
import java.util.Optional;

import dev.ratelimiter.gateway.RouteMetadata;

import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * A router function whose gateway routes pass the limiter first. It asks which gateway route matched right after the
 * match (see {@link LimitedRequest}) and hands the limiter that route's id; a match that was no gateway route, or a
 * route opted out, is handled as before.
 */
final class RateLimitedRouterFunction implements RouterFunction<ServerResponse> {

    private final RouterFunction<ServerResponse> delegate;
    private final MvcRateLimiter limiter;
    /** Behind the limiter, so a request it refuses is never counted in progress; null without load shedding. */
    private final MvcLoadShedding shedding;
    /** The routes' own attributes (their metadata when written in Java), read on the first request. */
    private volatile Map<String, Map<String, Object>> attributes;

    RateLimitedRouterFunction(RouterFunction<ServerResponse> delegate, MvcRateLimiter limiter,
            MvcLoadShedding shedding) {
        this.delegate = delegate;
        this.limiter = limiter;
        this.shedding = shedding;
    }

    @Override
    public Optional<HandlerFunction<ServerResponse>> route(ServerRequest request) {
        Object attribute = request.servletRequest().getAttribute(LimitedRequest.ATTRIBUTE);
        if (!(attribute instanceof LimitedRequest limited)) {
            return delegate.route(request);
        }
        limited.forgetRoute();
        Optional<HandlerFunction<ServerResponse>> handler = delegate.route(request);
        String routeId = limited.routeId();
        if (handler.isEmpty() || routeId == null) {
            return handler;
        }
        Map<String, Object> metadata = limiter.metadata(routeId, attributes().getOrDefault(routeId, Map.of()));
        if (!RouteMetadata.limited(metadata)) {
            return handler;
        }
        HandlerFunction<ServerResponse> next = shedding == null ? handler.get()
                : shedding.guard(routeId, metadata, limited, handler.get());
        return Optional.of(matched -> limiter.handle(matched, next, routeId, metadata, limited));
    }

    /**
     * Read once, not when the bean is made: the visit needs the routes built, and a router function's routes need
     * not be before its first request.
     */
    private Map<String, Map<String, Object>> attributes() {
        Map<String, Map<String, Object>> read = attributes;
        if (read == null) {
            read = RouterFunctionAttributes.of(delegate);
            attributes = read;
        }
        return read;
    }

    @Override
    public void accept(RouterFunctions.Visitor visitor) {
        delegate.accept(visitor);
    }

    @Override
    public String toString() {
        return "rate-limited " + delegate;
    }
}

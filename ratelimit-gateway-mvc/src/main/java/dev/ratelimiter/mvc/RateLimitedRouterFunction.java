package dev.ratelimiter.mvc;

import java.util.Map;
import java.util.Optional;

import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.gateway.RouteMetadata;
import org.springframework.web.servlet.function.AsyncServerResponse;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * A router function whose gateway routes pass the limiter first. The matched handler runs with its request armed
 * ({@link LimitedRequest#arm}): when the handler is a gateway route's, that route's first filter names it, and the
 * limiter (then the load shedder) decides it there, before the route's other filters and its upstream call. A handler
 * that names no gateway route (a plain WebMvc.fn route), or a route opted out, is handled as before.
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
        LimitedRequest limited = request.servletRequest().getAttribute(LimitedRequest.ATTRIBUTE) instanceof LimitedRequest
                found ? found : null;
        if (limited != null) {
            // matching (a forward's, while an earlier handler is still running) sets the id of every route it tries
            limited.disarm();
        }
        Optional<HandlerFunction<ServerResponse>> handler = delegate.route(request);
        if (handler.isEmpty() || limited == null) {
            return handler;
        }
        HandlerFunction<ServerResponse> matched = handler.get();
        return Optional.of(handled -> handle(handled, matched, limited));
    }

    private ServerResponse handle(ServerRequest request, HandlerFunction<ServerResponse> matched,
            LimitedRequest limited) throws Exception {
        limited.arm(routeId -> decide(request, routeId, limited));
        ServerResponse response = null;
        try {
            response = matched.handle(request);
        }
        catch (LimitedRequest.Refused refused) {
            return RefusalResponses.of(refused.refusal());
        }
        finally {
            // Asynchronous work may still name its route, on another thread: the request stays armed for it, and
            // a refusal there fails the async result, which RefusedRequestExceptionResolver answers.
            if (!(response instanceof AsyncServerResponse)) {
                limited.disarm();
            }
        }
        // a filter around the gateway route that caught the refusal answered instead: the refusal is the answer
        RefusalRenderer.Rendered refusal = limited.refusal();
        return refusal != null ? RefusalResponses.of(refusal) : response;
    }

    /** The route's ruling: not limited, else refused by the limiter, else by the load shedder, else admitted. */
    private MvcRequestLifecycle.Ruling decide(ServerRequest request, String routeId, LimitedRequest limited) {
        Map<String, Object> metadata = limiter.metadata(routeId, attributes().getOrDefault(routeId, Map.of()));
        if (!RouteMetadata.limited(metadata)) {
            return MvcRequestLifecycle.Ruling.UNLIMITED;
        }
        RefusalRenderer.Rendered refused = limiter.decide(request, routeId, metadata, limited);
        if (refused == null && shedding != null) {
            refused = shedding.admit(request, routeId, metadata, limited);
        }
        // admitted: its error page, should the upstream call fail, is never answered as a refusal
        return refused == null ? MvcRequestLifecycle.Ruling.ADMITTED : MvcRequestLifecycle.Ruling.refused(refused);
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

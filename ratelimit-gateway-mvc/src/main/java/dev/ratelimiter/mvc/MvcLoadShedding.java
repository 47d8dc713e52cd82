package dev.ratelimiter.mvc;

import java.time.Duration;
import java.util.Map;

import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.Priority;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPaths;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.PriorityChoice;
import dev.ratelimiter.gateway.RefusalAnswer;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.gateway.RouteMetadata;
import org.springframework.http.HttpHeaders;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * Priority load shedding on Gateway Server MVC, the WebFlux {@code LoadSheddingFilter}'s twin on the same core
 * {@link LoadShedder}s: it admits a route's request after the limiter ({@link RateLimitedRouterFunction}), so only a
 * request the limiter let through is counted in progress (a client over its own limit is told so with 429 first). A request let through holds a ticket
 * on its {@link LimitedRequest} until the servlet filter ends it (the response written, the upstream failed, the
 * client gone, or the async work completed); a shed one gets the same 503 {@code overloaded} problem as on WebFlux.
 */
public final class MvcLoadShedding {

    private final Map<String, LoadShedder> byRoute;
    private final VerdictListener listener;
    private final PriorityChoice priorities;
    private final long retryAfterSeconds;
    private final RefusalRenderer refusals;

    public MvcLoadShedding(Map<String, LoadShedder> byRoute, VerdictListener listener, Priority defaultPriority,
            String priorityHeader, boolean headerTrusted, Duration retryAfter, RefusalRenderer refusals) {
        this.byRoute = Map.copyOf(byRoute);
        this.listener = listener;
        this.priorities = new PriorityChoice(defaultPriority, priorityHeader, headerTrusted);
        this.retryAfterSeconds = Math.max(1, (retryAfter.toMillis() + 999) / 1000);
        this.refusals = refusals;
    }

    /**
     * Admits a request the limiter let through to the route's upstream: null, holding a ticket on {@code limited}
     * until the servlet filter ends it, or the 503 {@code overloaded} answer when the upstream is full for its
     * priority. A route whose upstream has no shedder is always admitted.
     */
    RefusalRenderer.Rendered admit(ServerRequest request, String routeId, Map<String, Object> metadata, LimitedRequest limited) {
        LoadShedder shedder = byRoute.get(routeId);
        if (shedder == null) {
            return null;
        }
        String header = priorities.header();
        Priority priority = priorities.choose(routeId, metadata.get(PriorityChoice.PRIORITY_METADATA),
                header == null ? null : request.headers().firstHeader(header));
        LoadShedder.Ticket ticket = shedder.tryAcquire(priority);
        if (ticket == null) {
            RequestAttributes attributes = limited.attributes() != null ? limited.attributes()
                    : RequestAttributes.ofRoute(routeId, RequestPaths.normalise(request.requestPath().value()),
                            RouteMetadata.routeClass(metadata));
            listener.onShed(attributes, priority, shedder.upstream());
            return refusals.render(RefusalAnswer.overloaded(attributes, shedder.upstream(), priority.label(),
                    retryAfterSeconds), new HttpHeaders(), attributes, limited);
        }
        limited.hold(ticket);
        return null;
    }
}

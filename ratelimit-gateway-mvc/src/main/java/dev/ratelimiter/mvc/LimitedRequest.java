package dev.ratelimiter.mvc;

import dev.ratelimiter.core.RequestPermits;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;

/**
 * One request as the limiter follows it through the servlet: the gateway route that took it, the response to put the
 * rate-limit fields on, and the concurrency permits to give back when the request is over.
 *
 * <p>Why it records the route id: Gateway Server MVC names the route only while it matches it
 * ({@code GatewayDelegatingRouterFunction} sets {@value MvcUtils#GATEWAY_ROUTE_ID_ATTR} around its match and removes
 * it afterwards), so the id is caught here, as it is set, for the router function that asks right after matching.
 */
final class LimitedRequest extends HttpServletRequestWrapper {

    /** The attribute under which the servlet filter leaves this object for the router functions. */
    static final String ATTRIBUTE = LimitedRequest.class.getName();

    private final HttpServletResponse response;
    private String routeId;
    private RequestPermits permits;

    LimitedRequest(HttpServletRequest request, HttpServletResponse response) {
        super(request);
        this.response = response;
    }

    @Override
    public void setAttribute(String name, Object value) {
        if (MvcUtils.GATEWAY_ROUTE_ID_ATTR.equals(name) && value instanceof String id) {
            routeId = id;
        }
        super.setAttribute(name, value);
    }

    /** Forgets the route last named, before a router function matches anew. */
    void forgetRoute() {
        routeId = null;
    }

    /** The gateway route named during the last match, or null when no gateway route took part. */
    String routeId() {
        return routeId;
    }

    HttpServletResponse response() {
        return response;
    }

    /** The request's permits, made on first use; given back by {@link #end()}. */
    RequestPermits permits() {
        if (permits == null) {
            permits = new RequestPermits();
        }
        return permits;
    }

    /** The request is over (answered, failed, or the client went away): every permit it holds goes back. */
    void end() {
        if (permits != null) {
            permits.end();
        }
    }
}

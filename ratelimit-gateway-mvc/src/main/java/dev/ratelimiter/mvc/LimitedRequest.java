package dev.ratelimiter.mvc;

import java.io.IOException;

import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.RequestAttributes;
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
    private RequestAttributes attributes;
    /** The load shedder's count of this request in progress at its upstream, when it has one. */
    private LoadShedder.Ticket ticket;

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

    /** What the limiter decided this request as, kept for the load shedder's events; null before. */
    RequestAttributes attributes() {
        return attributes;
    }

    void attributes(RequestAttributes decided) {
        attributes = decided;
    }

    /** The request counts in progress at its upstream until {@link #end} releases the ticket. */
    void hold(LoadShedder.Ticket held) {
        ticket = held;
    }

    /**
     * The request is over (answered, failed, or the client went away): every permit it holds goes back, and its
     * upstream's in-flight count falls. A failure or a 503/504 tells an adaptive limit the upstream was overloaded;
     * a client gone away (an {@link IOException} out of the write) says nothing about the upstream's latency.
     *
     * @param failure what the request ended with, or null
     */
    void end(Throwable failure) {
        try {
            end();
        }
        finally {
            if (ticket != null) {
                int status = response.getStatus();
                boolean clientGone = failure instanceof IOException;
                ticket.release(failure != null && !clientGone || status == 503 || status == 504, !clientGone);
            }
        }
    }

    /** The request is over (answered, failed, or the client went away): every permit it holds goes back. */
    void end() {
        if (permits != null) {
            permits.end();
        }
    }
}

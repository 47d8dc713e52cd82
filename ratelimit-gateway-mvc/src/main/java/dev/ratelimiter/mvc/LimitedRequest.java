package dev.ratelimiter.mvc;

import java.io.IOException;

import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPermits;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * One request as the limiter follows it through the servlet: the gateway route that took it, the response to put the
 * rate-limit fields on, and the concurrency permits to give back when the request is over.
 *
 * <p>Why the limiter hears of the route here: the only sure sign of which gateway route took a request is that route's
 * own first filter, which Gateway Server MVC puts outermost on every gateway route ({@code GatewayRouterFunctions
 * .route(id)} begins with {@code BeforeFilterFunctions.routeId(id)}): it sets {@value MvcUtils#GATEWAY_ROUTE_ID_ATTR}
 * on the servlet request as the matched handler starts, before any of the route's other filters. Signs seen while
 * matching are not sure: the id is set for every gateway route tried, matched or not, and inside a nested router
 * function it goes to the nested request's own attributes. So the router function arms this request as it hands
 * over the matched handler ({@link #arm}), and the route id set while armed is the route the limiter decides.
 */
final class LimitedRequest extends HttpServletRequestWrapper {

    /** The attribute under which the servlet filter leaves this object for the router functions. */
    static final String ATTRIBUTE = LimitedRequest.class.getName();

    private final HttpServletResponse response;
    /** Told the route id once, as the matched gateway route's first filter sets it; null when not armed. */
    private RouteGate gate;
    /** Whether a gateway route has been decided for this request (a forward to another route is not decided again). */
    private boolean decided;
    /** The limiter's refusal, kept until the handler that was armed returns it (a filter may swallow the throw). */
    private ServerResponse refusal;
    private RequestPermits permits;
    private RequestAttributes attributes;
    /** The load shedder's count of this request in progress at its upstream, when it has one. */
    private LoadShedder.Ticket ticket;

    /** What decides a gateway route for this request: its refusal, or null to let it through. */
    @FunctionalInterface
    interface RouteGate {
        ServerResponse decide(String routeId);
    }

    /** The limiter's refusal, thrown out of the route's first filter so that nothing after it runs. */
    static final class Refused extends RuntimeException {

        private final transient ServerResponse response;

        Refused(ServerResponse response) {
            super("refused by the rate limiter", null, false, false);
            this.response = response;
        }

        ServerResponse response() {
            return response;
        }
    }

    LimitedRequest(HttpServletRequest request, HttpServletResponse response) {
        super(request);
        this.response = response;
    }

    /**
     * Decides the gateway route whose id is set while armed, the moment it is set: within the matched route's first
     * filter, before its others and its upstream call. A refusal is thrown as a {@link Refused}, which ends that
     * filter chain, and kept for {@link #refusal()} in case a filter around it caught the throw.
     */
    @Override
    public void setAttribute(String name, Object value) {
        super.setAttribute(name, value);
        if (gate != null && MvcUtils.GATEWAY_ROUTE_ID_ATTR.equals(name) && value instanceof String id) {
            RouteGate deciding = gate;
            gate = null;
            decided = true;
            ServerResponse refused = deciding.decide(id);
            if (refused != null) {
                refusal = refused;
                throw new Refused(refused);
            }
        }
    }

    /**
     * Arms this request for the matched handler about to run, unless a gateway route was decided for it already.
     *
     * @return whether it was armed: then {@link #disarm()} must follow the handler
     */
    boolean arm(RouteGate decide) {
        if (decided) {
            return false;
        }
        gate = decide;
        return true;
    }

    /** The handler has returned: a route id set from now on (a forward's) is not decided. */
    void disarm() {
        gate = null;
    }

    /** The limiter's refusal of this request, or null. */
    ServerResponse refusal() {
        return refusal;
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

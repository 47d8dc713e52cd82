package dev.ratelimiter.mvc;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.gateway.RefusalWriter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;

/**
 * One request as the limiter follows it through the servlet: the gateway route that took it, the response to put the
 * rate-limit fields on, and the concurrency permits and load-shedding tickets to give back when the request is over.
 *
 * <p>Why the limiter hears of the route here: the only sure sign of which gateway route took a request is that route's
 * own first filter, which Gateway Server MVC puts outermost on every gateway route ({@code GatewayRouterFunctions
 * .route(id)} begins with {@code BeforeFilterFunctions.routeId(id)}): it sets {@value MvcUtils#GATEWAY_ROUTE_ID_ATTR}
 * on the servlet request as the matched handler starts, before any of the route's other filters. Signs seen while
 * matching are not sure: the id is set for every gateway route tried, matched or not, and inside a nested router
 * function it goes to the nested request's own attributes. So the router function arms this request as it hands
 * over the matched handler ({@link #arm}), and the route id set while armed is the route the limiter decides.
 *
 * <p>What a request reaches after that is decided too, never let through on the strength of an earlier answer: a
 * forward to another gateway route arms the request again for its target (each route the request reaches is decided,
 * as a forward is on WebFlux), and once the limiter has refused the request, every later naming of a route (a filter
 * that retries its chain, a forward, a fallback) is refused again before it can reach an upstream. A matched handler
 * that answers asynchronously leaves the request armed: its route may name itself on another thread.
 */
final class LimitedRequest extends HttpServletRequestWrapper {

    /** The attribute under which the servlet filter leaves this object for the router functions. */
    static final String ATTRIBUTE = LimitedRequest.class.getName();

    private final HttpServletResponse response;
    /** Told the next route id set, by the route's first filter; null when not armed. Set and read on any thread. */
    private volatile RouteGate gate;
    /** The limiter's refusal once there is one: from then on this request reaches no route. */
    private volatile RefusalWriter.Rendered refusal;
    private RequestPermits permits;
    private RequestAttributes attributes;
    /** The load shedders' counts of this request in progress at its upstreams (one per route a forward reached). */
    private List<LoadShedder.Ticket> tickets;
    private boolean ended;

    /** What decides a gateway route for this request: its refusal, or null to let it through. */
    @FunctionalInterface
    interface RouteGate {
        RefusalWriter.Rendered decide(String routeId);
    }

    /** The limiter's refusal, thrown out of the route's first filter so that nothing after it runs. */
    static final class Refused extends RuntimeException {

        private final transient RefusalWriter.Rendered refusal;

        Refused(RefusalWriter.Rendered refusal) {
            super("refused by the rate limiter", null, false, false);
            this.refusal = refusal;
        }

        RefusalWriter.Rendered refusal() {
            return refusal;
        }
    }

    LimitedRequest(HttpServletRequest request, HttpServletResponse response) {
        super(request);
        this.response = response;
    }

    /**
     * Decides the gateway route whose id is set while armed, the moment it is set: within the matched route's first
     * filter, before its others and its upstream call. A refusal is thrown as a {@link Refused}, which ends that
     * filter chain, and kept for {@link #refusal()}: a filter around it that caught the throw and asks again, or
     * forwards, is refused again.
     */
    @Override
    public void setAttribute(String name, Object value) {
        super.setAttribute(name, value);
        if (MvcUtils.GATEWAY_ROUTE_ID_ATTR.equals(name) && value instanceof String id) {
            RefusalWriter.Rendered refused = routeNamed(id);
            if (refused != null) {
                throw new Refused(refused);
            }
        }
    }

    private RefusalWriter.Rendered routeNamed(String routeId) {
        RefusalWriter.Rendered refused = refusal;
        if (refused != null) {
            return refused;
        }
        RouteGate deciding = gate;
        if (deciding == null) {
            return null;
        }
        gate = null;
        refused = deciding.decide(routeId);
        refusal = refused;
        return refused;
    }

    /** Arms this request for the matched handler about to run: the next route id set is decided by {@code decide}. */
    void arm(RouteGate decide) {
        gate = decide;
    }

    /** Route ids set from now on are not decided (the matching of a forward sets one for every route it tries). */
    void disarm() {
        gate = null;
    }

    /** The limiter's refusal of this request, or null. */
    RefusalWriter.Rendered refusal() {
        return refusal;
    }

    HttpServletResponse response() {
        return response;
    }

    /** The request's permits, made on first use (on any thread); given back by {@link #end()}, even if made after. */
    synchronized RequestPermits permits() {
        if (permits == null) {
            permits = new RequestPermits();
            if (ended) {
                permits.end();
            }
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

    /** The request counts in progress at an upstream until {@link #end} releases the ticket (at once if it has). */
    void hold(LoadShedder.Ticket held) {
        synchronized (this) {
            if (!ended) {
                if (tickets == null) {
                    tickets = new ArrayList<>(1);
                }
                tickets.add(held);
                return;
            }
        }
        held.release(false, false);
    }

    /**
     * The request is over (answered, failed, or the client went away): every permit it holds goes back, and its
     * upstreams' in-flight counts fall; a permit or ticket taken after this (by async work still running) goes back at
     * once. A failure or a 503/504 tells an adaptive limit the upstream was overloaded; a client gone away (an
     * {@link IOException} out of the write) says nothing about the upstream's latency.
     *
     * @param failure what the request ended with, or null
     */
    void end(Throwable failure) {
        RequestPermits given;
        List<LoadShedder.Ticket> held;
        synchronized (this) {
            ended = true;
            given = permits;
            held = tickets;
            tickets = null;
        }
        try {
            if (given != null) {
                given.end();
            }
        }
        finally {
            if (held != null) {
                int status = response.getStatus();
                boolean clientGone = failure instanceof IOException;
                boolean overloaded = failure != null && !clientGone || status == 503 || status == 504;
                held.forEach(ticket -> ticket.release(overloaded, !clientGone));
            }
        }
    }
}

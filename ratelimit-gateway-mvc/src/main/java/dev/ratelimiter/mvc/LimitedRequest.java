package dev.ratelimiter.mvc;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.gateway.RefusalRenderer;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;

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
 *
 * <p>The request is over for its permits and tickets when the servlet is done with it <em>and</em> no upstream call
 * of it is still in progress: a timeout filter ({@code ServerResponse.async} with a timeout) ends the servlet request
 * while its worker's call goes on at the upstream, and that call still counts there.
 */
final class LimitedRequest extends HttpServletRequestWrapper {

    /** The attribute under which the servlet filter leaves this object for the router functions. */
    static final String ATTRIBUTE = LimitedRequest.class.getName();

    private final HttpServletResponse response;
    /** One decision at a time: two threads naming a route at once (a hedging filter) must not both be let through. */
    private final ReentrantLock deciding = new ReentrantLock();
    /** Told the next route id set, by the route's first filter; null when not armed. Set and read on any thread. */
    private volatile RouteGate gate;
    /** The limiter's refusal once there is one: from then on this request reaches no route. */
    private volatile RefusalRenderer.Rendered refusal;
    /** Whether a limited route admitted this request (its error page, if refused, answers with its failure). */
    private volatile boolean admitted;
    /** This is the error dispatch of a request a limited route admitted (its upstream call then failed). */
    private final boolean reportsAdmitted;
    /** What the error page of an admitted request answers when its own route refuses it: the failure's status. */
    private final RefusalRenderer.Rendered failureAnswer;
    private RequestPermits permits;
    private RequestAttributes attributes;
    /** The load shedders' counts of this request in progress at its upstreams (one per route a forward reached). */
    private List<LoadShedder.Ticket> tickets;
    /** Upstream calls of this request in progress (see {@link #upstreamCallStarted}). */
    private int upstreamCalls;
    private boolean servletDone;
    private boolean released;
    private Throwable failure;
    /** The response's status when the servlet was done (read then: the container recycles the response after). */
    private int status;

    /** What decides a gateway route for this request: its refusal, or null to let it through. */
    @FunctionalInterface
    interface RouteGate {
        RefusalRenderer.Rendered decide(String routeId);
    }

    /** The limiter's refusal, thrown out of the route's first filter so that nothing after it runs. */
    static final class Refused extends RuntimeException {

        private final transient RefusalRenderer.Rendered refusal;

        Refused(RefusalRenderer.Rendered refusal) {
            super("refused by the rate limiter", null, false, false);
            this.refusal = refusal;
        }

        RefusalRenderer.Rendered refusal() {
            return refusal;
        }
    }

    LimitedRequest(HttpServletRequest request, HttpServletResponse response) {
        this(request, response, null);
    }

    /**
     * @param reported the request an error dispatch reports on, or null. Its refusal stands. Otherwise the error page
     * is decided on the route that takes it, like any request (its call to that route's upstream counts there); but
     * when a limited route admitted the reported request, a refusal of its error page is not answered as a refusal
     * (429 {@code rate_limited} to a request that was let through), but with the failure's own status and no body
     */
    LimitedRequest(HttpServletRequest request, HttpServletResponse response, LimitedRequest reported) {
        super(request);
        this.response = response;
        this.refusal = reported == null ? null : reported.refusal;
        this.reportsAdmitted = reported != null && reported.admitted;
        this.failureAnswer = reportsAdmitted ? failureAnswer(request) : null;
    }

    private static RefusalRenderer.Rendered failureAnswer(HttpServletRequest request) {
        int status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE) instanceof Integer code
                && code >= 400 && code <= 599 ? code : HttpStatus.INTERNAL_SERVER_ERROR.value();
        return new RefusalRenderer.Rendered(HttpStatusCode.valueOf(status), new HttpHeaders(), new byte[0]);
    }

    /**
     * Decides the gateway route whose id is set while armed, the moment it is set: within the matched route's first
     * filter, before its others and its upstream call. A refusal is thrown as a {@link Refused}, which ends that
     * filter chain, and kept for {@link #refusal()}: a filter around it that caught the throw and asks again, or
     * forwards, is refused again.
     */
    @Override
    public void setAttribute(String name, Object value) {
        boolean routeNamed = MvcUtils.GATEWAY_ROUTE_ID_ATTR.equals(name) && value instanceof String;
        if (routeNamed && over()) {
            // async work that outlived its request (a timeout answered it): undecided, and nobody waits for it
            throw new RequestOverException();
        }
        super.setAttribute(name, value);
        if (routeNamed) {
            RefusalRenderer.Rendered refused = routeNamed((String) value);
            if (refused != null) {
                throw new Refused(refused);
            }
        }
    }

    /**
     * Always under the lock, even to find nothing to decide: the thread deciding clears the gate before it asks the
     * store, and a second thread naming the route meanwhile (a hedging filter running the chain twice) must wait for
     * that decision, not read "nothing armed, nothing refused" and go on undecided. Uncontended, as it nearly always
     * is, the lock costs next to nothing.
     */
    private RefusalRenderer.Rendered routeNamed(String routeId) {
        deciding.lock();
        try {
            RefusalRenderer.Rendered refused = refusal;
            RouteGate decide = gate;
            if (refused != null || decide == null) {
                return refused;
            }
            gate = null;
            refused = decide.decide(routeId);
            if (refused != null && reportsAdmitted) {
                refused = failureAnswer;
            }
            refusal = refused;
            return refused;
        }
        finally {
            deciding.unlock();
        }
    }

    /** Arms this request for the matched handler about to run: the next route id set is decided by {@code decide}. */
    void arm(RouteGate decide) {
        gate = decide;
    }

    /** Route ids set from now on are not decided (the matching of a forward sets one for every route it tries). */
    void disarm() {
        gate = null;
    }

    /** A limited route let this request through. */
    void admitted() {
        admitted = true;
    }

    /** The limiter's refusal of this request, or null. */
    RefusalRenderer.Rendered refusal() {
        return refusal;
    }

    HttpServletResponse response() {
        return response;
    }

    /** The request's permits, made on first use (on any thread); given back when it is over, even if made after. */
    synchronized RequestPermits permits() {
        if (permits == null) {
            permits = new RequestPermits();
            if (released) {
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

    /** The request counts in progress at an upstream until it is over (at once if it is). */
    void hold(LoadShedder.Ticket held) {
        synchronized (this) {
            if (!released) {
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
     * A call of this request to an upstream is about to start: the request is not over before it has returned.
     *
     * @return false, and the call must not be made, when the request is over already: its answer is given, its
     * permits and tickets are back, so the call would reach the upstream uncounted, for nobody
     */
    synchronized boolean upstreamCallStarted() {
        if (released) {
            return false;
        }
        upstreamCalls++;
        return true;
    }

    /**
     * The request the limiter follows as {@code request}, or null: found by unwrapping, without reading the
     * container's request, which may be recycled already when a worker outlives its servlet request.
     */
    static LimitedRequest of(HttpServletRequest request) {
        ServletRequest unwrapped = request;
        while (unwrapped instanceof ServletRequestWrapper wrapper) {
            if (wrapper instanceof LimitedRequest limited) {
                return limited;
            }
            unwrapped = wrapper.getRequest();
        }
        try {
            return request.getAttribute(ATTRIBUTE) instanceof LimitedRequest limited ? limited : null;
        }
        catch (RuntimeException recycled) {
            return null;
        }
    }

    private synchronized boolean over() {
        return released;
    }

    /** Work of a request that is over (answered already, e.g. by a timeout): its route and upstream call do not run. */
    static final class RequestOverException extends IllegalStateException {

        RequestOverException() {
            super("the request is over (answered already, e.g. by a timeout) and its rate-limit permits are back; "
                    + "its route does not run");
        }
    }

    /** A call started by {@link #upstreamCallStarted} has returned (answered or failed). */
    void upstreamCallEnded() {
        synchronized (this) {
            upstreamCalls--;
            if (!servletDone || upstreamCalls > 0 || released) {
                return;
            }
            released = true;
        }
        release();
    }

    /**
     * The servlet is done with the request (answered, failed, or the client went away): unless an upstream call of it
     * is still in progress, every permit it holds goes back and its upstreams' in-flight counts fall, and a permit or
     * ticket taken after that (by async work still running) goes back at once.
     *
     * @param failure what the request ended with, or null
     */
    void end(Throwable failure) {
        synchronized (this) {
            if (servletDone) {
                return;
            }
            servletDone = true;
            this.failure = failure;
            this.status = response.getStatus();
            if (upstreamCalls > 0) {
                return;
            }
            released = true;
        }
        release();
    }

    /**
     * Gives everything back. A failure or a 503/504 tells an adaptive limit the upstream was overloaded; a client gone
     * away (an {@link IOException} out of the write) says nothing about the upstream's latency.
     */
    private void release() {
        RequestPermits given;
        List<LoadShedder.Ticket> held;
        synchronized (this) {
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
                boolean clientGone = failure instanceof IOException;
                boolean overloaded = failure != null && !clientGone || status == 503 || status == 504;
                held.forEach(ticket -> ticket.release(overloaded, !clientGone));
            }
        }
    }
}

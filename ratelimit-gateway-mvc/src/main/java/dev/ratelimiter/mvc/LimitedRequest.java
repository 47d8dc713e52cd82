package dev.ratelimiter.mvc;

import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.gateway.ResponseCharges;
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
 *
 * <p>This class only translates the servlet's signs into events: what each event comes to (decided or not, refused,
 * over, given back) is {@link MvcRequestLifecycle}'s, the request's state machine.
 */
final class LimitedRequest extends HttpServletRequestWrapper {

    /** The attribute under which the servlet filter leaves this object for the router functions. */
    static final String ATTRIBUTE = LimitedRequest.class.getName();

    private final HttpServletResponse response;
    private final MvcRequestLifecycle lifecycle;
    private RequestAttributes attributes;
    /** What its response owes, when a rule charged from the response admitted it; set on the deciding thread. */
    private volatile ResponseCharges.Pending responseCharge;

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
        this.lifecycle = new MvcRequestLifecycle(reported == null ? null : reported.lifecycle,
                () -> failureAnswer(request));
    }

    private static RefusalRenderer.Rendered failureAnswer(HttpServletRequest request) {
        int status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE) instanceof Integer code
                && code >= 400 && code <= 599 ? code : HttpStatus.INTERNAL_SERVER_ERROR.value();
        return new RefusalRenderer.Rendered(HttpStatusCode.valueOf(status), new HttpHeaders(), new byte[0]);
    }

    /**
     * Tells the lifecycle of the gateway route whose id is set, the moment it is set: within the matched route's
     * first filter, before its others and its upstream call. A refusal is thrown as a {@link Refused}, which ends
     * that filter chain; the lifecycle keeps it for {@link #refusal()}: a filter around it that caught the throw and
     * asks again, or forwards, is refused again.
     */
    @Override
    public void setAttribute(String name, Object value) {
        boolean routeNamed = MvcUtils.GATEWAY_ROUTE_ID_ATTR.equals(name) && value instanceof String;
        if (routeNamed && !lifecycle.routeMayBeNamed()) {
            // async work that outlived its request (a timeout answered it): undecided, and nobody waits for it
            throw new RequestOverException();
        }
        super.setAttribute(name, value);
        if (routeNamed) {
            RefusalRenderer.Rendered refused = lifecycle.routeNamed((String) value);
            if (refused != null) {
                throw new Refused(refused);
            }
        }
    }

    /** Arms this request for the matched handler about to run: the next route id set is decided by {@code decide}. */
    void arm(MvcRequestLifecycle.RouteGate decide) {
        lifecycle.arm(decide);
    }

    /** Route ids set from now on are not decided (the matching of a forward sets one for every route it tries). */
    void disarm() {
        lifecycle.disarm();
    }

    /** The limiter's refusal of this request, or null. */
    RefusalRenderer.Rendered refusal() {
        return lifecycle.refusal();
    }

    HttpServletResponse response() {
        return response;
    }

    /** The request's permits, made on first use (on any thread); given back when it is over, even if made after. */
    RequestPermits permits() {
        return lifecycle.permits();
    }

    /** What the limiter decided this request as, kept for the load shedder's events; null before. */
    RequestAttributes attributes() {
        return attributes;
    }

    void attributes(RequestAttributes decided) {
        attributes = decided;
    }

    /** What the response owes once written, or null. */
    ResponseCharges.Pending responseCharge() {
        return responseCharge;
    }

    void responseCharge(ResponseCharges.Pending owed) {
        responseCharge = owed;
    }

    /** The request counts in progress at an upstream until it is over (at once if it is). */
    void hold(LoadShedder.Ticket held) {
        lifecycle.hold(held::release);
    }

    /**
     * A call of this request to an upstream is about to start: the request is not over before it has returned.
     *
     * @return false, and the call must not be made, when the request is over already
     */
    boolean upstreamCallStarted() {
        return lifecycle.upstreamCallStarted();
    }

    /** A call started by {@link #upstreamCallStarted} has returned (answered or failed). */
    void upstreamCallEnded() {
        lifecycle.upstreamCallEnded();
    }

    /**
     * The servlet is done with the request (answered, failed, or the client went away): unless an upstream call of it
     * is still in progress, every permit it holds goes back and its upstreams' in-flight counts fall, and a permit or
     * ticket taken after that (by async work still running) goes back at once.
     *
     * @param failure what the request ended with, or null
     */
    void end(Throwable failure) {
        lifecycle.end(failure, response::getStatus);
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

    /** Work of a request that is over (answered already, e.g. by a timeout): its route and upstream call do not run. */
    static final class RequestOverException extends IllegalStateException {

        RequestOverException() {
            super("the request is over (answered already, e.g. by a timeout) and its rate-limit permits are back; "
                    + "its route does not run");
        }
    }
}

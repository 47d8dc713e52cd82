package dev.ratelimiter.mvc;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.gateway.RefusalRenderer;

/**
 * The life of one request as the limiter follows it through the servlet, as a state machine of its own: no servlet,
 * no Spring, only the events {@link LimitedRequest} and the router function tell it, and what each event comes to.
 * Two small machines, orthogonal to each other:
 *
 * <p><b>{@link Routing}</b>, the gateway routes the request reaches. The router function arms the request as it hands
 * over a matched handler ({@link #arm}); the route id that handler's first filter names while armed is decided, once,
 * by the gate it was armed with ({@link #routeNamed}). A second naming while the first is being decided (a hedging
 * filter running the chain on two threads) waits for that decision and takes its answer: it is never let through
 * undecided while the first waits for the store. A refusal is final: every later naming of a route (a filter that
 * retries its chain, a forward, a fallback, the request's error page) is refused again.
 *
 * <table>
 * <caption>Routing</caption>
 * <tr><th>from</th><th>event</th><th>to</th><th>the naming is</th></tr>
 * <tr><td>UNARMED, ARMED</td><td>arm(gate)</td><td>ARMED</td><td></td></tr>
 * <tr><td>ARMED</td><td>disarm</td><td>UNARMED</td><td></td></tr>
 * <tr><td>UNARMED</td><td>routeNamed</td><td>UNARMED</td><td>let through undecided</td></tr>
 * <tr><td>ARMED</td><td>routeNamed</td><td>DECIDING</td><td>asked of the gate (once)</td></tr>
 * <tr><td>DECIDING</td><td>the gate let it through</td><td>UNARMED (ARMED if armed again meanwhile)</td>
 * <td>let through</td></tr>
 * <tr><td>DECIDING</td><td>the gate refused</td><td>REFUSED</td><td>refused</td></tr>
 * <tr><td>DECIDING</td><td>the gate failed</td><td>UNARMED (ARMED if armed again meanwhile)</td>
 * <td>the gate's exception</td></tr>
 * <tr><td>DECIDING</td><td>routeNamed (another thread)</td><td>(waits for the decision)</td>
 * <td>the decision's answer</td></tr>
 * <tr><td>DECIDING</td><td>arm / disarm</td><td>DECIDING</td><td>(the gate for the next naming)</td></tr>
 * <tr><td>REFUSED</td><td>any</td><td>REFUSED</td><td>refused again</td></tr>
 * </table>
 *
 * <p><b>{@link Progress}</b>, what the request holds. It is over for its permits and tickets when the servlet is done
 * with it <em>and</em> no upstream call of it is still in progress: a timeout filter ({@code ServerResponse.async}
 * with a timeout) ends the servlet request while its worker's call goes on at the upstream, and that call still
 * counts there. Everything is given back exactly once, on the move to {@link Progress#OVER}; a permit or ticket
 * taken after it (by async work still running) goes back at once, and an upstream call is not started after it.
 *
 * <table>
 * <caption>Progress</caption>
 * <tr><th>from</th><th>event</th><th>to</th><th>what happens</th></tr>
 * <tr><td>SERVING, DRAINING</td><td>upstreamCallStarted</td><td>(same)</td><td>the call counts; go on</td></tr>
 * <tr><td>SERVING</td><td>upstreamCallEnded</td><td>SERVING</td><td></td></tr>
 * <tr><td>SERVING</td><td>end, no call in progress</td><td>OVER</td><td>everything given back</td></tr>
 * <tr><td>SERVING</td><td>end, calls in progress</td><td>DRAINING</td><td></td></tr>
 * <tr><td>DRAINING</td><td>upstreamCallEnded, others in progress</td><td>DRAINING</td><td></td></tr>
 * <tr><td>DRAINING</td><td>upstreamCallEnded, the last</td><td>OVER</td><td>everything given back</td></tr>
 * <tr><td>DRAINING, OVER</td><td>end</td><td>(same)</td><td>nothing (ended once)</td></tr>
 * <tr><td>OVER</td><td>upstreamCallStarted</td><td>OVER</td><td>refused: the call must not be made</td></tr>
 * <tr><td>any</td><td>permits / hold</td><td>(same)</td><td>kept; in OVER given back at once</td></tr>
 * </table>
 *
 * <p>Two locks: the state under this object's monitor, held only for bookkeeping (never across a decision or a
 * giving back); and {@link #deciding}, held across a decision so that namings are decided one at a time (taken before
 * the monitor, never inside it). Arming and disarming never wait for a decision in progress.
 */
final class MvcRequestLifecycle {

    /** Where the request stands with the gateway routes it reaches. */
    enum Routing {
        /** Nothing to decide: a route named now goes through undecided (not the handler armed for, or decided). */
        UNARMED,
        /** A matched handler is running: the next route it names is decided by the gate it was armed with. */
        ARMED,
        /** A naming is being decided; any other naming waits for that decision. */
        DECIDING,
        /** The limiter refused the request: every later naming of a route is refused again. Final. */
        REFUSED
    }

    /** Where the request stands with what it holds (its concurrency permits, its load shedders' tickets). */
    enum Progress {
        /** The servlet is at work on it; upstream calls of it may be in progress. */
        SERVING,
        /** The servlet is done with it, an upstream call of it is still in progress. */
        DRAINING,
        /** Over: everything it held is back, and anything taken from now on goes back at once. Final. */
        OVER
    }

    /** What a gate rules on a named route: let through without a limit, admitted by the limiter, or refused. */
    record Ruling(RefusalRenderer.Rendered refusal, boolean limited) {

        /** A route the limiter does not limit (opted out): let through, the request not admitted by it. */
        static final Ruling UNLIMITED = new Ruling(null, false);
        /** A limited route let the request through (its error page, if refused, answers with its failure). */
        static final Ruling ADMITTED = new Ruling(null, true);

        static Ruling refused(RefusalRenderer.Rendered refusal) {
            return new Ruling(Objects.requireNonNull(refusal, "refusal"), true);
        }
    }

    /** What decides a gateway route for this request. */
    @FunctionalInterface
    interface RouteGate {
        Ruling decide(String routeId);
    }

    /** Something held until the request is over: a load shedder's ticket. */
    @FunctionalInterface
    interface Held {

        /**
         * @param overloaded the upstream answered as an overloaded server does (a failure, 503, 504)
         * @param sample whether the request's latency says anything about the upstream (not when the client left)
         */
        void release(boolean overloaded, boolean sample);
    }

    /** One decision at a time: two threads naming a route at once (a hedging filter) must not both be let through. */
    private final ReentrantLock deciding = new ReentrantLock();
    /** This is the error page of a request a limited route admitted (its upstream call then failed). */
    private final boolean reportsAdmitted;
    /** What that error page answers when its own route refuses it: the failure's status, never a 429. */
    private final RefusalRenderer.Rendered failureAnswer;

    // guarded by this
    private Routing routing;
    /** The gate the next naming is decided by; null when there is none. */
    private RouteGate gate;
    private RefusalRenderer.Rendered refusal;
    private boolean admitted;
    private Progress progress = Progress.SERVING;
    private int upstreamCalls;
    private RequestPermits permits;
    private List<Held> held;
    private Throwable failure;
    private int status;

    /** A request of its own. */
    MvcRequestLifecycle() {
        this(null, () -> null);
    }

    /**
     * @param reported the request an error dispatch reports on, or null. Its refusal stands. Otherwise the error page
     * is decided on the route that takes it, like any request; but when a limited route admitted the reported
     * request, a refusal of its error page is answered with {@code failureAnswer}, asked for then
     */
    MvcRequestLifecycle(MvcRequestLifecycle reported, Supplier<RefusalRenderer.Rendered> failureAnswer) {
        RefusalRenderer.Rendered reportedRefusal = null;
        boolean reportedAdmitted = false;
        if (reported != null) {
            synchronized (reported) {
                reportedRefusal = reported.refusal;
                reportedAdmitted = reported.admitted;
            }
        }
        this.refusal = reportedRefusal;
        this.routing = reportedRefusal != null ? Routing.REFUSED : Routing.UNARMED;
        this.reportsAdmitted = reportedAdmitted;
        this.failureAnswer = reportedAdmitted ? failureAnswer.get() : null;
    }

    /** Arms the request for the matched handler about to run: the next route it names is decided by {@code decide}. */
    synchronized void arm(RouteGate decide) {
        if (routing == Routing.REFUSED) {
            return;
        }
        gate = decide;
        if (routing == Routing.UNARMED) {
            routing = Routing.ARMED;
        }
    }

    /** Route ids named from now on are not decided (the matching of a forward names one for every route it tries). */
    synchronized void disarm() {
        gate = null;
        if (routing == Routing.ARMED) {
            routing = Routing.UNARMED;
        }
    }

    /**
     * Whether a route may still be named: not when the request is over (async work that outlived it, after a timeout
     * answered it): that work is undecided and nobody waits for it. Asked before the route id is set on the request,
     * which may be recycled by then.
     */
    synchronized boolean routeMayBeNamed() {
        return progress != Progress.OVER;
    }

    /**
     * A route was named (its first filter set its id): decided when armed, refused again when refused.
     *
     * <p>Always under the decision's lock, even to find nothing to decide: the thread deciding disarms before it asks
     * the gate, and a second thread naming the route meanwhile (a hedging filter running the chain twice) must wait
     * for that decision, not read "nothing armed, nothing refused" and go on undecided. Uncontended, as it nearly
     * always is, the lock costs next to nothing.
     *
     * @return the refusal to answer with (thrown out of the route's first filter, so that nothing after it runs), or
     * null to go on
     */
    RefusalRenderer.Rendered routeNamed(String routeId) {
        deciding.lock();
        try {
            RouteGate asked;
            synchronized (this) {
                if (routing == Routing.REFUSED) {
                    return refusal;
                }
                if (gate == null) {
                    return null;
                }
                asked = gate;
                gate = null;
                routing = Routing.DECIDING;
            }
            Ruling ruling = null;
            try {
                ruling = asked.decide(routeId);
            }
            finally {
                ruling = settle(ruling);
            }
            return ruling.refusal();
        }
        finally {
            deciding.unlock();
        }
    }

    /** Out of DECIDING with the gate's ruling (null: the gate failed). */
    private synchronized Ruling settle(Ruling ruling) {
        // a naming decided within this decision, on its own thread (the lock is reentrant), may have refused already
        boolean nested = deciding.getHoldCount() > 1;
        if (routing == Routing.REFUSED) {
            return Ruling.refused(refusal);
        }
        if (ruling != null && ruling.refusal() != null) {
            refusal = reportsAdmitted ? failureAnswer : ruling.refusal();
            routing = Routing.REFUSED;
            gate = null;
            return Ruling.refused(refusal);
        }
        if (ruling != null && ruling.limited()) {
            admitted = true;
        }
        if (!nested) {
            routing = gate != null ? Routing.ARMED : Routing.UNARMED;
        }
        return ruling != null ? ruling : Ruling.UNLIMITED;
    }

    /** The limiter's refusal of this request, or null. */
    synchronized RefusalRenderer.Rendered refusal() {
        return refusal;
    }

    /** Whether a limited route let this request through (a route it reached later may still have refused it). */
    synchronized boolean admitted() {
        return admitted;
    }

    synchronized Routing routing() {
        return routing;
    }

    synchronized Progress progress() {
        return progress;
    }

    /** The request's permits, made on first use (on any thread); given back when it is over, even if made after. */
    synchronized RequestPermits permits() {
        if (permits == null) {
            permits = new RequestPermits();
            if (progress == Progress.OVER) {
                permits.end();
            }
        }
        return permits;
    }

    /** Held until the request is over; released at once if it is. */
    void hold(Held ticket) {
        synchronized (this) {
            if (progress != Progress.OVER) {
                if (held == null) {
                    held = new ArrayList<>(1);
                }
                held.add(ticket);
                return;
            }
        }
        ticket.release(false, false);
    }

    /**
     * A call of this request to an upstream is about to start: the request is not over before it has returned.
     *
     * @return false, and the call must not be made, when the request is over already: its answer is given, its
     * permits and tickets are back, so the call would reach the upstream uncounted, for nobody
     */
    synchronized boolean upstreamCallStarted() {
        if (progress == Progress.OVER) {
            return false;
        }
        upstreamCalls++;
        return true;
    }

    /**
     * A call started by {@link #upstreamCallStarted} has returned (answered or failed).
     *
     * @return whether this made the request over (everything it held was given back)
     */
    boolean upstreamCallEnded() {
        synchronized (this) {
            if (upstreamCalls > 0) {
                upstreamCalls--;
            }
            if (progress != Progress.DRAINING || upstreamCalls > 0) {
                return false;
            }
            progress = Progress.OVER;
        }
        release();
        return true;
    }

    /**
     * The servlet is done with the request (answered, failed, or the client went away); only the first time counts.
     *
     * @param failure what the request ended with, or null
     * @param status the response's status, read now (the container recycles the response after)
     * @return whether this made the request over (no upstream call was in progress; everything was given back)
     */
    boolean end(Throwable failure, IntSupplier status) {
        synchronized (this) {
            if (progress != Progress.SERVING) {
                return false;
            }
            this.failure = failure;
            this.status = status.getAsInt();
            if (upstreamCalls > 0) {
                progress = Progress.DRAINING;
                return false;
            }
            progress = Progress.OVER;
        }
        release();
        return true;
    }

    /**
     * Gives everything back, once, on the move to OVER. A failure or a 503/504 tells an adaptive limit the upstream
     * was overloaded; a client gone away (an {@link IOException} out of the write) says nothing about the upstream's
     * latency.
     */
    private void release() {
        RequestPermits given;
        List<Held> tickets;
        Throwable ended;
        int answered;
        synchronized (this) {
            given = permits;
            tickets = held;
            held = null;
            ended = failure;
            answered = status;
        }
        try {
            if (given != null) {
                given.end();
            }
        }
        finally {
            if (tickets != null) {
                boolean clientGone = ended instanceof IOException;
                boolean overloaded = ended != null && !clientGone || answered == 503 || answered == 504;
                tickets.forEach(ticket -> ticket.release(overloaded, !clientGone));
            }
        }
    }

    @Override
    public synchronized String toString() {
        return "request " + routing + "/" + progress + (upstreamCalls > 0 ? " (" + upstreamCalls + " calls)" : "");
    }
}

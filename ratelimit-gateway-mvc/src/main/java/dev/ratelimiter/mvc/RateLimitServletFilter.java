package dev.ratelimiter.mvc;

import java.io.IOException;

import dev.ratelimiter.gateway.ResponseCharges;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Follows every request through the servlet as a {@link LimitedRequest}, so the router functions can tell which gateway
 * route took it, and gives its concurrency permits back once the servlet is done with it: in a {@code finally}, so a
 * response written, an upstream that failed and a client that went away (an {@link IOException} out of the write) all
 * end the request.
 *
 * <p>The container's error dispatch is followed too: an error page ({@code /error}) that a catch-all gateway route
 * takes is proxied like any other request, so it is decided like one, never let through because the request it
 * reports on failed (its call to the error route's upstream counts there, for concurrency and load shedding too), and
 * a refusal of that request stands. The error page of a request a limited route admitted (whose upstream call then
 * failed) is decided too, but its refusal is answered with the failure's own status, never a 429 to a request the
 * limiter let through.
 */
public final class RateLimitServletFilter extends OncePerRequestFilter {

    @Override
    protected boolean shouldNotFilterErrorDispatch() {
        return false;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        // an error dispatch reports on a request this filter followed: its refusal stands, and its admission decides
        // how a refusal of the error page is answered
        LimitedRequest reported = request.getDispatcherType() == DispatcherType.ERROR
                && request.getAttribute(LimitedRequest.ATTRIBUTE) instanceof LimitedRequest previous ? previous : null;
        LimitedRequest limited = new LimitedRequest(request, response, reported);
        limited.setAttribute(LimitedRequest.ATTRIBUTE, limited);
        ChargedServletResponse charged = new ChargedServletResponse(response, limited::responseCharge);
        Throwable failure = null;
        try {
            chain.doFilter(limited, charged);
        }
        catch (IOException | ServletException | RuntimeException | Error ex) {
            failure = ex;
            throw ex;
        }
        finally {
            if (failure == null && request.isAsyncStarted()) {
                // The response is written later, on another thread: the request ends when the async work does.
                request.getAsyncContext().addListener(new Ending(limited, charged));
            }
            else {
                limited.end(failure);
                charge(limited, charged, failure);
            }
        }
    }

    /**
     * Charges what the response reported, when a rule charged from the response admitted the request: written to its
     * end unless the servlet ended with a failure (the client went away: an {@link IOException} out of the write).
     */
    private static void charge(LimitedRequest limited, ChargedServletResponse response, Throwable failure) {
        ResponseCharges.Pending owed = limited.responseCharge();
        if (owed != null) {
            owed.complete(failure == null, response.getStatus(), response.headers());
        }
    }

    /**
     * Ends an async request when it completes. A timeout or an error is only remembered: the container dispatches
     * the request once more after it to write the answer (a timeout's 503), and that dispatch is still the request;
     * completion follows either way.
     */
    private static final class Ending implements AsyncListener {

        private final LimitedRequest limited;
        private final ChargedServletResponse response;
        private volatile Throwable failure;

        Ending(LimitedRequest limited, ChargedServletResponse response) {
            this.limited = limited;
            this.response = response;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            limited.end(failure);
            charge(limited, response, failure);
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            failure = new IllegalStateException("async request timed out");
        }

        @Override
        public void onError(AsyncEvent event) {
            failure = event.getThrowable();
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // started again: still in progress, and this listener must be registered anew
            event.getAsyncContext().addListener(this);
        }
    }
}

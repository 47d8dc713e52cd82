package dev.ratelimiter.mvc;

import java.io.IOException;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
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
 * <p>The container's error dispatch is followed too, as a request of its own: an error page ({@code /error}) that a
 * catch-all gateway route takes is proxied like any other request, so it is decided like one, never let through
 * because the request it reports on failed.
 */
public final class RateLimitServletFilter extends OncePerRequestFilter {

    @Override
    protected boolean shouldNotFilterErrorDispatch() {
        return false;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        LimitedRequest limited = new LimitedRequest(request, response);
        limited.setAttribute(LimitedRequest.ATTRIBUTE, limited);
        Throwable failure = null;
        try {
            chain.doFilter(limited, response);
        }
        catch (IOException | ServletException | RuntimeException | Error ex) {
            failure = ex;
            throw ex;
        }
        finally {
            if (failure == null && request.isAsyncStarted()) {
                // The response is written later, on another thread: the request ends when the async work does.
                request.getAsyncContext().addListener(new Ending(limited));
            }
            else {
                limited.end(failure);
            }
        }
    }

    /** Ends an async request once, whichever way its async work ends. */
    private record Ending(LimitedRequest limited) implements AsyncListener {

        @Override
        public void onComplete(AsyncEvent event) {
            limited.end(null);
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            limited.end(new IllegalStateException("async request timed out"));
        }

        @Override
        public void onError(AsyncEvent event) {
            limited.end(event.getThrowable());
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // started again: still in progress, and this listener must be registered anew
            event.getAsyncContext().addListener(this);
        }
    }
}

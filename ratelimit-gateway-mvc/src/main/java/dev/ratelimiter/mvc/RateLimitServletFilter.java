package dev.ratelimiter.mvc;

import java.io.IOException;

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
 */
public final class RateLimitServletFilter extends OncePerRequestFilter {

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        LimitedRequest limited = new LimitedRequest(request, response);
        limited.setAttribute(LimitedRequest.ATTRIBUTE, limited);
        try {
            chain.doFilter(limited, response);
        }
        finally {
            limited.end();
        }
    }
}

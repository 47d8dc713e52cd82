package dev.ratelimiter.autoconfigure.mvc;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;

import dev.ratelimiter.autoconfigure.security.LoopbackOnly;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

/**
 * {@link LoopbackOnly} in front of the actuator endpoints and the rules API on the servlet flavour, where they are
 * served on loopback without authentication: a request addressed to another host name, or sent by a page of another
 * site, is a 403 problem, as on WebFlux.
 */
final class LoopbackOnlyServletFilter extends OperatorPathFilter {

    LoopbackOnlyServletFilter(OperatorPaths paths) {
        super(paths);
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String refusal = LoopbackOnly.refusal(Collections.list(request.getHeaders(HttpHeaders.HOST)),
                Collections.list(request.getHeaders(HttpHeaders.ORIGIN)));
        if (refusal == null) {
            chain.doFilter(request, response);
            return;
        }
        response.setStatus(HttpServletResponse.SC_FORBIDDEN);
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.getOutputStream().write(LoopbackOnly.problem(refusal).getBytes(StandardCharsets.UTF_8));
    }
}

package dev.ratelimiter.mvc;

import java.io.IOException;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The Server MVC counterpart of {@code ClientHeaderStripping}: the identity headers a client must not set
 * ({@code ratelimit.identity.strip-headers}) are hidden from everything after this filter, registered first of the
 * servlet filters: Spring Security, the limiter, the routes and the proxied request. An application filter after it
 * may set them again from the verified token.
 */
public final class ServletClientHeaderStripping extends OncePerRequestFilter {

    private final List<String> names;

    /** @param names the headers to hide, matched ignoring case */
    public ServletClientHeaderStripping(List<String> names) {
        this.names = List.copyOf(names);
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        boolean present = names.stream().anyMatch(name -> request.getHeader(name) != null);
        chain.doFilter(present ? new Stripped(request) : request, response);
    }

    private boolean stripped(String name) {
        return names.stream().anyMatch(name::equalsIgnoreCase);
    }

    private final class Stripped extends HttpServletRequestWrapper {

        Stripped(HttpServletRequest request) {
            super(request);
        }

        @Override
        public String getHeader(String name) {
            return stripped(name) ? null : super.getHeader(name);
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            return stripped(name) ? Collections.emptyEnumeration() : super.getHeaders(name);
        }

        @Override
        public Enumeration<String> getHeaderNames() {
            return Collections.enumeration(Collections.list(super.getHeaderNames()).stream()
                    .filter(name -> !stripped(name)).toList());
        }

        @Override
        public long getDateHeader(String name) {
            return stripped(name) ? -1 : super.getDateHeader(name);
        }

        @Override
        public int getIntHeader(String name) {
            return stripped(name) ? -1 : super.getIntHeader(name);
        }
    }
}

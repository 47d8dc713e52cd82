package dev.ratelimiter.gateway.webflux;

import java.util.List;

import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Removes the identity headers a client must not set ({@code ratelimit.identity.strip-headers}) from every request as
 * it arrives: before Spring Security, the limiter and every route. A route's {@code RemoveRequestHeader} (or a
 * {@code default-filters} entry) cannot do this for the limiter, which decides at order −100, before any route
 * filter. A {@code WebFilter} of the application's that sets these headers from the verified token after this one is
 * what the limiter and the upstream then read.
 */
public final class ClientHeaderStripping implements WebFilter, Ordered {

    private final List<String> names;

    /** @param names the headers to remove, matched ignoring case */
    public ClientHeaderStripping(List<String> names) {
        this.names = List.copyOf(names);
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!present(exchange.getRequest().getHeaders())) {
            return chain.filter(exchange);
        }
        return chain.filter(exchange.mutate().request(request -> request.headers(writable -> names
                .forEach(writable::remove))).build());
    }

    private boolean present(HttpHeaders headers) {
        for (String name : names) {
            if (headers.containsHeader(name)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}

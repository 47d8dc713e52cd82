package dev.ratelimiter.autoconfigure.security;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import reactor.core.publisher.Mono;

/**
 * {@link LoopbackOnly} in front of the actuator endpoints and the rules API on WebFlux, where they are served on
 * loopback without authentication: a request addressed to another host name, or sent by a page of another site, is
 * a 403 problem. Paths are matched as the endpoints' handler mapping matches them; no Spring Security is needed.
 */
public final class LoopbackOnlyFilter implements WebFilter {

    /** Empty: every request of the port. */
    private final List<PathPattern> scope = new ArrayList<>();

    /** @param patterns the operator paths on the application's port; null on a management port of their own */
    public LoopbackOnlyFilter(String @Nullable [] patterns) {
        if (patterns != null) {
            for (String pattern : patterns) {
                scope.add(PathPatternParser.defaultInstance.parse(pattern));
            }
        }
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!guards(exchange.getRequest().getPath().pathWithinApplication())) {
            return chain.filter(exchange);
        }
        HttpHeaders headers = exchange.getRequest().getHeaders();
        String refusal = LoopbackOnly.refusal(headers.get(HttpHeaders.HOST), headers.get(HttpHeaders.ORIGIN));
        if (refusal == null) {
            return chain.filter(exchange);
        }
        OperatorRequests.closeWhenRefused(exchange);
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.FORBIDDEN);
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        byte[] body = LoopbackOnly.problem(refusal).getBytes(StandardCharsets.UTF_8);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    private boolean guards(PathContainer path) {
        if (scope.isEmpty()) {
            return true;
        }
        for (PathPattern pattern : scope) {
            if (pattern.matches(path)) {
                return true;
            }
        }
        return false;
    }
}

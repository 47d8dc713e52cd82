package dev.ratelimiter.gateway.webflux;

import java.util.List;

import dev.ratelimiter.gateway.IdentityRequest;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpCookie;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;

/** A WebFlux exchange as the identity sources read it; the route is the one Spring Cloud Gateway matched. */
public record ExchangeIdentityRequest(ServerWebExchange exchange) implements IdentityRequest {

    @Override
    public HttpHeaders headers() {
        return exchange.getRequest().getHeaders();
    }

    @Override
    public String cookie(String name) {
        HttpCookie first = exchange.getRequest().getCookies().getFirst(name);
        return first != null ? first.getValue() : null;
    }

    @Override
    public String query(String name) {
        return exchange.getRequest().getQueryParams().getFirst(name);
    }

    @Override
    public boolean repeatedQuery(String name) {
        List<String> values = exchange.getRequest().getQueryParams().get(name);
        return values != null && values.size() > 1;
    }

    @Override
    public String path() {
        return exchange.getRequest().getPath().value();
    }

    @Override
    public String method() {
        return exchange.getRequest().getMethod().name();
    }

    @Override
    public String routeId() {
        Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
        return route != null ? route.getId() : null;
    }
}

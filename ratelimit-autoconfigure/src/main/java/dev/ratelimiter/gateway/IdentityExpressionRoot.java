package dev.ratelimiter.gateway;

import java.security.Principal;
import java.util.AbstractMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpCookie;
import org.springframework.web.server.ServerWebExchange;

/**
 * What an identity expression sees of a request, and nothing more: {@code headers['X-Client']} (null when absent or
 * sent twice), {@code cookies['session']}, {@code query['client']} (each the first value, or null), {@code path}, {@code method},
 * {@code route} (the matched route's id), {@code principal} (the authenticated principal's name) and
 * {@code claims['tenant_id']} (its token's claims). Strings and maps only, so an expression reaches no object whose
 * getters could do more than read.
 */
final class IdentityExpressionRoot {

    /** The properties an expression may read, in the order messages list them. */
    static final List<String> NAMES = List.of("headers", "cookies", "query", "path", "method", "route", "principal",
            "claims");

    static final Set<String> PROPERTIES = Set.copyOf(NAMES);

    private final ServerWebExchange exchange;
    private final Principal principal;
    private final boolean claimsReadable;

    IdentityExpressionRoot(ServerWebExchange exchange, Principal principal, boolean claimsReadable) {
        this.exchange = exchange;
        this.principal = principal;
        this.claimsReadable = claimsReadable;
    }

    Object property(String name) {
        return switch (name) {
            // a header sent twice has no value here: the source names those it reads literally to the resolver,
            // which refuses them as ambiguous; one looked up by a computed name just counts as absent
            case "headers" -> lookup(header -> RequestIdentity.repeated(exchange.getRequest().getHeaders(), header) ? null
                    : exchange.getRequest().getHeaders().getFirst(header));
            case "cookies" -> lookup(cookie -> {
                HttpCookie first = exchange.getRequest().getCookies().getFirst(cookie);
                return first != null ? first.getValue() : null;
            });
            case "query" -> lookup(exchange.getRequest().getQueryParams()::getFirst);
            case "path" -> exchange.getRequest().getPath().value();
            case "method" -> exchange.getRequest().getMethod().name();
            case "route" -> {
                Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
                yield route != null ? route.getId() : null;
            }
            case "principal" -> PrincipalSource.INSTANCE.read(exchange, principal);
            case "claims" -> claimsReadable && principal != null ? TokenClaims.of(principal) : Map.of();
            default -> throw new IllegalArgumentException(name);
        };
    }

    /** A map that answers {@code get} by asking the request: nothing is copied, and nothing else is offered. */
    private static Map<String, String> lookup(Function<String, String> values) {
        return new AbstractMap<>() {
            @Override
            public String get(Object key) {
                return key instanceof String name ? values.apply(name) : null;
            }

            @Override
            public boolean containsKey(Object key) {
                return get(key) != null;
            }

            @Override
            public Set<Entry<String, String>> entrySet() {
                return Set.of();
            }
        };
    }
}

package dev.ratelimiter.gateway;

import java.security.Principal;
import java.util.AbstractMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import org.springframework.http.HttpHeaders;

/**
 * What an identity expression sees of a request, and nothing more: {@code headers['X-Client']} and
 * {@code query['client']} (null when absent or sent twice), {@code cookies['session']} (the first, or null), {@code path}, {@code method},
 * {@code route} (the matched route's id), {@code principal} (the authenticated principal's name) and
 * {@code claims['tenant_id']} (its token's claims), {@code headerLengths['X-Query']} (a header's length in characters, 0
 * when absent, every copy of a repeated header counted) and {@code contentLength} (the {@code Content-Length} header as a
 * number, 0 when absent, infinite for a body sent chunked: a body's size known before the body is read, for costs), on either web stack. Strings and maps only, so an expression reaches no object whose
 * getters could do more than read.
 */
final class IdentityExpressionRoot {

    /** The properties an expression may read, in the order messages list them. */
    static final List<String> NAMES = List.of("headers", "cookies", "query", "path", "method", "route", "principal",
            "claims", "headerLengths", "contentLength");

    static final Set<String> PROPERTIES = Set.copyOf(NAMES);

    /** What the token says; every other property is the request, which the client writes. */
    private static final Set<String> TOKEN = Set.of("principal", "claims");

    private final IdentityRequest request;
    private final Principal principal;
    private final boolean claimsReadable;
    private boolean readTheRequest;

    IdentityExpressionRoot(IdentityRequest request, Principal principal, boolean claimsReadable) {
        this.request = request;
        this.principal = principal;
        this.claimsReadable = claimsReadable;
    }

    /** Whether the evaluation read anything but the token: the value is then one the client could write. */
    boolean readTheRequest() {
        return readTheRequest;
    }

    Object property(String name) {
        readTheRequest |= !TOKEN.contains(name);
        return switch (name) {
            // a header or query parameter sent twice has no value here: the source names those it reads literally to
            // the resolver, which refuses them as ambiguous; one looked up by a computed name just counts as absent
            case "headers" -> lookup(header -> RequestIdentity.repeated(request.headers(), header) ? null
                    : request.headers().getFirst(header));
            case "cookies" -> lookup(request::cookie);
            case "query" -> lookup(parameter -> request.repeatedQuery(parameter) ? null : request.query(parameter));
            case "path" -> request.path();
            case "method" -> request.method();
            case "route" -> request.routeId();
            case "principal" -> PrincipalSource.INSTANCE.read(request, principal);
            case "claims" -> claimsReadable && principal != null ? TokenClaims.of(principal) : Map.of();
            // every copy of a header sent more than once: an upstream joining them gets all their characters
            case "headerLengths" -> lookup(header -> {
                List<String> values = request.headers().get(header);
                return values == null ? 0 : values.stream().mapToInt(String::length).sum();
            });
            case "contentLength" -> contentLength();
            default -> throw new IllegalArgumentException(name);
        };
    }

    /**
     * The declared body size; a body whose size is not declared (HTTP/1.1 {@code Transfer-Encoding}, chunked) is of
     * unknown size, read as infinite so that a price by size takes its most ({@code max-cost}), never as 0.
     */
    private Object contentLength() {
        long declared = request.headers().getContentLength();
        if (declared >= 0) {
            return declared;
        }
        return request.headers().containsHeader(HttpHeaders.TRANSFER_ENCODING) ? Double.POSITIVE_INFINITY : 0L;
    }

    /** A map that answers {@code get} by asking the request: nothing is copied, and nothing else is offered. */
    private static <V> Map<String, V> lookup(Function<String, V> values) {
        return new AbstractMap<>() {
            @Override
            public V get(Object key) {
                return key instanceof String name ? values.apply(name) : null;
            }

            @Override
            public boolean containsKey(Object key) {
                return get(key) != null;
            }

            @Override
            public Set<Entry<String, V>> entrySet() {
                return Set.of();
            }
        };
    }
}

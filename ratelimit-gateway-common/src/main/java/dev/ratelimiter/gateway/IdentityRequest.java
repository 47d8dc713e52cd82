package dev.ratelimiter.gateway;

import org.springframework.http.HttpHeaders;

/**
 * What the identity sources read of a request, whatever the web stack: its headers, cookies, query, path, method and
 * the gateway route that took it. Each flavour answers it from its own request (the WebFlux exchange, the servlet
 * request) without copying anything up front: a source asks only for what it reads.
 */
public interface IdentityRequest {

    /** The request headers. */
    HttpHeaders headers();

    /**
     * The first cookie of this name's value, or null. Browsers send two cookies of one name set on different paths
     * (the longer path first), and servers read the first: so do we.
     */
    String cookie(String name);

    /** The first query parameter of this name's value (decoded), or null; never a form field of the body. */
    String query(String name);

    /** Whether the query string carries a parameter of this name more than once. */
    boolean repeatedQuery(String name);

    /** The request path, as the client sent it (not decoded). */
    String path();

    /** The HTTP method's name. */
    String method();

    /** The id of the gateway route that took the request, or null. */
    String routeId();

}

package dev.ratelimiter.mvc;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

import dev.ratelimiter.gateway.IdentityRequest;
import jakarta.servlet.http.Cookie;
import org.springframework.http.HttpHeaders;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * A servlet request as the identity sources read it. The query is read from the query string itself, never through
 * the servlet's parameters: those include the fields of a form body, which reading would consume before the request
 * is proxied (and which the WebFlux flavour's {@code query} does not see either).
 */
record ServletIdentityRequest(ServerRequest request, String routeId) implements IdentityRequest {

    @Override
    public HttpHeaders headers() {
        return request.headers().asHttpHeaders();
    }

    @Override
    public String cookie(String name) {
        Cookie[] cookies = request.servletRequest().getCookies();
        if (cookies != null) {
            for (Cookie cookie : cookies) {
                if (cookie.getName().equals(name)) {
                    return cookie.getValue();
                }
            }
        }
        return null;
    }

    /** The first parameter of this name in the query string, decoded as WebFlux decodes it (a {@code +} a space). */
    @Override
    public String query(String name) {
        for (String pair : pairs()) {
            int equals = pair.indexOf('=');
            if (key(pair, equals).equals(name)) {
                return equals < 0 ? null : decode(pair.substring(equals + 1));
            }
        }
        return null;
    }

    /** Whether the query string names this parameter twice, with or without a value, as WebFlux counts them. */
    @Override
    public boolean repeatedQuery(String name) {
        boolean seen = false;
        for (String pair : pairs()) {
            if (key(pair, pair.indexOf('=')).equals(name)) {
                if (seen) {
                    return true;
                }
                seen = true;
            }
        }
        return false;
    }

    private String[] pairs() {
        String query = request.servletRequest().getQueryString();
        return query == null ? new String[0] : query.split("&");
    }

    private static String key(String pair, int equals) {
        return decode(equals < 0 ? pair : pair.substring(0, equals));
    }

    private static String decode(String value) {
        try {
            return URLDecoder.decode(value, StandardCharsets.UTF_8);
        }
        catch (IllegalArgumentException ex) {
            // a malformed escape: read as sent, as WebFlux does
            return value;
        }
    }

    @Override
    public String path() {
        return request.requestPath().value();
    }

    @Override
    public String method() {
        return request.method().name();
    }
}

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
        String query = request.servletRequest().getQueryString();
        if (query == null) {
            return null;
        }
        for (String pair : query.split("&")) {
            int equals = pair.indexOf('=');
            String key = decode(equals < 0 ? pair : pair.substring(0, equals));
            if (key.equals(name)) {
                return equals < 0 ? null : decode(pair.substring(equals + 1));
            }
        }
        return null;
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

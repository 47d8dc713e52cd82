package dev.ratelimiter.autoconfigure.security;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * What the WebFlux filters in front of the operator endpoints share, free of Spring Security (which a port answering
 * loopback only need not have): the paths they guard on the application's port, and how a refusal ends its
 * connection.
 */
public final class OperatorRequests {

    private OperatorRequests() {
    }

    /** Every exposed endpoint's path and what lies below it, the discovery page at the base path, the rules API. */
    public static String[] endpointPatterns(PathMappedEndpoints endpoints, String... rulesApi) {
        List<String> patterns = new ArrayList<>(List.of(rulesApi));
        String base = endpoints.getBasePath();
        if (!base.isEmpty() && !base.equals("/")) {
            patterns.add(base);
            patterns.add(base + "/");
        }
        for (String path : endpoints.getAllPaths()) {
            patterns.add(path);
            patterns.add(path + "/**");
        }
        return patterns.toArray(String[]::new);
    }

    /**
     * A refusal (401, 403) is answered without reading the request's body, and a connection whose request was not read
     * to its end goes on taking in whatever the client sends before it can read the next request: an endless chunked
     * body, for ever. A refused request that declares a body is therefore told the connection closes, and the server
     * stops reading it.
     */
    static void closeWhenRefused(ServerWebExchange exchange) {
        HttpHeaders headers = exchange.getRequest().getHeaders();
        List<String> encodings = headers.get(HttpHeaders.TRANSFER_ENCODING);
        boolean chunked = encodings != null
                && encodings.stream().anyMatch(encoding -> encoding.toLowerCase(Locale.ROOT).contains("chunked"));
        if (headers.getContentLength() <= 0 && !chunked) {
            return;
        }
        ServerHttpResponse response = exchange.getResponse();
        response.beforeCommit(() -> {
            HttpStatusCode status = response.getStatusCode();
            if (status != null && (status.value() == 401 || status.value() == 403)) {
                response.getHeaders().set(HttpHeaders.CONNECTION, "close");
            }
            return Mono.empty();
        });
    }
}

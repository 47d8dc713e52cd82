package dev.ratelimiter.gateway;

import java.nio.charset.StandardCharsets;

import dev.ratelimiter.core.JsonText;
import dev.ratelimiter.core.RuleOutcome;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Writes the limiter's own answers as RFC 9457 problem documents ({@code application/problem+json}),
 * with a stable {@code error} code that clients can branch on.
 */
final class ProblemResponses {

    static final MediaType PROBLEM_JSON = MediaType.valueOf("application/problem+json");

    private ProblemResponses() {
    }

    /** 429 for a client over its limit; the rate-limit headers must already be on the response. */
    static Mono<Void> rateLimited(ServerWebExchange exchange, RuleOutcome limiting) {
        long retryAfter = RateLimitHeaders.retryAfterSeconds(limiting);
        String policy = limiting.rule().id();
        boolean concurrency = limiting.check().concurrency();
        String what = concurrency
                ? "Concurrency limit '" + policy + "' reached: " + limiting.rule().limit().quota()
                        + " request(s) already in progress"
                : "Rate limit '" + policy + "' exceeded";
        String body = "{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                + "\"detail\":" + quote(what + "; retry after " + retryAfter + " second" + (retryAfter == 1 ? "" : "s")
                        + ".")
                + ",\"error\":" + (concurrency ? "\"too_many_in_progress\"" : "\"rate_limited\"")
                + ",\"retryAfter\":" + retryAfter
                + ",\"policy\":" + quote(policy) + "}";
        return write(exchange, HttpStatus.TOO_MANY_REQUESTS, body);
    }

    /** 503 for a request that a fail-closed rule could not check: the limiter, not the client, is the cause. */
    static Mono<Void> unavailable(ServerWebExchange exchange, RuleOutcome limiting) {
        long retryAfter = RateLimitHeaders.retryAfterSeconds(limiting);
        exchange.getResponse().getHeaders().set("Retry-After", String.valueOf(retryAfter));
        String body = "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,"
                + "\"detail\":" + quote("Rate limit '" + limiting.rule().id() + "' cannot be checked right now; "
                        + "retry after " + retryAfter + " second" + (retryAfter == 1 ? "" : "s") + ".")
                + ",\"error\":\"limiter_unavailable\",\"retryAfter\":" + retryAfter
                + ",\"policy\":" + quote(limiting.rule().id()) + "}";
        return write(exchange, HttpStatus.SERVICE_UNAVAILABLE, body);
    }

    /** 503 for a request shed because the upstream is full: the server is busy, the client did nothing wrong. */
    static Mono<Void> overloaded(ServerWebExchange exchange, String upstream, String priority, long retryAfter) {
        exchange.getResponse().getHeaders().set("Retry-After", String.valueOf(retryAfter));
        String body = "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,"
                + "\"detail\":" + quote("The service is at capacity and is shedding " + priority
                        + " requests first; retry after " + retryAfter + " second" + (retryAfter == 1 ? "" : "s")
                        + ".")
                + ",\"error\":\"overloaded\",\"retryAfter\":" + retryAfter + ",\"priority\":" + quote(priority)
                + ",\"upstream\":" + quote(upstream) + "}";
        return write(exchange, HttpStatus.SERVICE_UNAVAILABLE, body);
    }

    /** 400 for a request that says twice who it is: the limiter will not pick one of the two. */
    static Mono<Void> duplicateIdentity(ServerWebExchange exchange, String headerName) {
        String body = "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                + "\"detail\":" + quote("The " + headerName + " header appears more than once; send it once.")
                + ",\"error\":\"duplicate_identity_header\",\"header\":" + quote(headerName) + "}";
        return write(exchange, HttpStatus.BAD_REQUEST, body);
    }

    /** 400 for a request without a value that a rule denying such requests needs ({@code when-missing: deny}). */
    static Mono<Void> missingIdentity(ServerWebExchange exchange, String ruleId, String what) {
        String body = "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                + "\"detail\":" + quote("Limit '" + ruleId + "' needs " + what + ", which this request lacks.")
                + ",\"error\":\"missing_identity\",\"policy\":" + quote(ruleId) + "}";
        return write(exchange, HttpStatus.BAD_REQUEST, body);
    }

    /**
     * 400 for an API key that fails the configured format check: nothing is spent on it. {@code where} is the key's
     * source in words, e.g. "the X-API-Key header".
     */
    static Mono<Void> invalidApiKey(ServerWebExchange exchange, String where, String problem) {
        String body = "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                + "\"detail\":" + quote("The API key in " + where + " " + problem + ".")
                + ",\"error\":\"invalid_api_key\"}";
        return write(exchange, HttpStatus.BAD_REQUEST, body);
    }

    /** The configured answer (401 by default) for a request that carries no API key. */
    static Mono<Void> missingApiKey(ServerWebExchange exchange, HttpStatusCode status, String where,
            String challenge) {
        return credentialRefused(exchange, status, challenge, "This API requires an API key in " + where + ".",
                "missing_api_key");
    }

    /** The configured answer (401 by default) for an API key that no tier or override lists. */
    static Mono<Void> unknownApiKey(ServerWebExchange exchange, HttpStatusCode status, String where,
            String challenge) {
        return credentialRefused(exchange, status, challenge, "The API key in " + where + " is not known here.",
                "unknown_api_key");
    }

    /** A refused credential: with 401, {@code WWW-Authenticate} says where the key goes. */
    private static Mono<Void> credentialRefused(ServerWebExchange exchange, HttpStatusCode status, String challenge,
            String detail, String error) {
        if (status.value() == HttpStatus.UNAUTHORIZED.value()) {
            exchange.getResponse().getHeaders().set("WWW-Authenticate", challenge);
        }
        HttpStatus known = HttpStatus.resolve(status.value());
        String title = known != null ? known.getReasonPhrase() : "Error";
        String body = "{\"type\":\"about:blank\",\"title\":" + quote(title) + ",\"status\":" + status.value()
                + ",\"detail\":" + quote(detail) + ",\"error\":" + quote(error) + "}";
        return write(exchange, status, body);
    }

    private static Mono<Void> write(ServerWebExchange exchange, HttpStatusCode status, String body) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(status);
        response.getHeaders().setContentType(PROBLEM_JSON);
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        response.getHeaders().setContentLength(bytes.length);
        DataBuffer buffer = response.bufferFactory().wrap(bytes);
        return response.writeWith(Mono.just(buffer));
    }

    /** A JSON string literal. Only configuration-derived text reaches here, but it is escaped all the same. */
    static String quote(String text) {
        return JsonText.quote(text);
    }
}

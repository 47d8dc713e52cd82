package dev.ratelimiter.gateway;

import java.util.Map;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;

/**
 * An answer the limiter is about to write, as {@linkplain RateLimitResponseCustomizer customizers} see it: the status,
 * the response headers (the rate-limit fields, {@code Retry-After} and {@code Content-Type} already on them) and the
 * problem body's members in order. All three may be changed; {@code Content-Length} is worked out after the last
 * customizer.
 *
 * <p>Body values are written as JSON: strings, numbers, booleans, {@code null}, and maps, lists and arrays of those;
 * any other object as the string of its {@code toString()}. The default members arrive as strings, lists of strings,
 * {@code status} as an {@link Integer} and {@code retryAfter} as a {@link Long}. If a customizer changes the status and leaves the body's
 * {@code status} member at the old value, the member follows the new status (RFC 9457 has the two agree).
 */
public final class Refusal {

    /** Which answer this is; {@link #error()} is its default {@code error} member. */
    public enum Kind {
        /** 429: an enforced rate limit or quota was exceeded. */
        RATE_LIMITED("rate_limited"),
        /** 429: a concurrency limit already has as many requests in progress as it allows. */
        TOO_MANY_IN_PROGRESS("too_many_in_progress"),
        /** 503: a rule that fails closed could not be checked because the store did not answer. */
        LIMITER_UNAVAILABLE("limiter_unavailable"),
        /** 503: the upstream is at capacity and the load shedder dropped this request's priority. */
        OVERLOADED("overloaded"),
        /** 400: the request carries an identity header more than once. */
        DUPLICATE_IDENTITY("duplicate_identity_header"),
        /** 400: a rule that denies such requests needs a value (user, tenant, address) the request lacks. */
        MISSING_IDENTITY("missing_identity"),
        /** 400: the path has a dot or empty segment with {@code ;parameters}, which upstreams read two ways. */
        AMBIGUOUS_PATH("ambiguous_path"),
        /** 400: the API key fails the configured format check. */
        INVALID_API_KEY("invalid_api_key"),
        /** 400: a user or tenant id fails its configured format check. */
        INVALID_IDENTITY("invalid_identity"),
        /** 403: a user or tenant id nobody vouched for, and such ids are rejected. */
        UNKNOWN_IDENTITY("unknown_identity"),
        /** 401 by default: the request carries no API key and such requests are rejected. */
        MISSING_API_KEY("missing_api_key"),
        /** 401 or 403: no tier or override lists the API key, and unknown keys are rejected. */
        UNKNOWN_API_KEY("unknown_api_key");

        private final String error;

        Kind(String error) {
            this.error = error;
        }

        /** The default body's {@code error} member, a stable code clients branch on. */
        public String error() {
            return error;
        }
    }

    private HttpStatusCode status;
    private final HttpHeaders headers;
    private final Map<String, Object> body;

    Refusal(HttpStatusCode status, HttpHeaders headers, Map<String, Object> body) {
        this.status = status;
        this.headers = headers;
        this.body = body;
    }

    public HttpStatusCode getStatus() {
        return status;
    }

    /** The status to answer with; it must stay an error (400 or more), or the default refusal is sent. */
    public void setStatus(HttpStatusCode status) {
        this.status = status;
    }

    /** The response headers to send, writable; a copy, so a customizer that fails leaves the response untouched. */
    public HttpHeaders getHeaders() {
        return headers;
    }

    /** The problem body's members in the order they are written, writable ({@code type}, {@code title}, …). */
    public Map<String, Object> getBody() {
        return body;
    }
}

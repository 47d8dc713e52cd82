package dev.ratelimiter.gateway;

import java.util.Map;

import dev.ratelimiter.core.JsonText;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;

/**
 * An answer the limiter is about to write, as {@linkplain RateLimitResponseCustomizer customizers} see it: the status,
 * the response headers (the rate-limit fields, {@code Retry-After} and {@code Content-Type} already on them) and the
 * problem body as a {@link ProblemDetail} ({@link #getProblemDetail()}). All three may be changed;
 * {@code Content-Length} is worked out after the last customizer.
 *
 * <p>The body is written in the order the limiter's answers have always had: {@code type}, {@code title},
 * {@code status}, {@code detail}, {@code instance} (those set), then the properties in the order they were set.
 * Property values are written as JSON: strings, numbers, booleans, {@code null}, and maps, lists and arrays of those;
 * any other object as the string of its {@code toString()}. The default properties are strings, lists of strings and
 * {@code retryAfter} a {@link Long}. If a customizer changes the status and leaves the problem's {@code status} at the
 * old value, it follows the new status (RFC 9457 has the two agree).
 *
 * <p>{@link #getBody()}, the body as a map of members, is kept for customizers written before the typed view: a body
 * changed through it is written as that map, member for member, as before. Asking for one view takes the body over
 * from the other, so a customizer keeps neither across a call to the other.
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
    /** Whichever view a customizer asked for last; the other is null. */
    private ProblemDetail problem;
    private Map<String, Object> members;

    Refusal(HttpStatusCode status, HttpHeaders headers, ProblemDetail problem) {
        this.status = status;
        this.headers = headers;
        this.problem = problem;
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

    /**
     * The problem body, writable: {@code setTitle}, {@code setDetail}, {@code setType}, {@code setInstance},
     * {@code setProperty} for the extension members ({@code error}, {@code retryAfter}, ...), which
     * {@code getProperties()} holds in their order.
     */
    public ProblemDetail getProblemDetail() {
        if (problem == null) {
            problem = ProblemMembers.from(members);
            members = null;
        }
        return problem;
    }

    /**
     * The problem body's members in the order they are written, writable ({@code type}, {@code title}, …).
     *
     * @deprecated read and change the body as a {@link ProblemDetail} through {@link #getProblemDetail()}. This map
     * still works: the body a customizer changes through it is written as the map, member for member; a later
     * {@link #getProblemDetail()} reads the map's members into a problem detail (and fails, sending the default
     * refusal, if a member RFC 9457 defines has a value of another kind, such as a {@code status} that is no number).
     */
    @Deprecated(since = "0.1.0")
    public Map<String, Object> getBody() {
        if (members == null) {
            members = ProblemMembers.of(problem);
            problem = null;
        }
        return members;
    }

    /** The body as JSON, its {@code status} following the answer's when a customizer changed only the latter. */
    String json(HttpStatusCode original) {
        boolean followStatus = status.value() != original.value();
        if (members != null) {
            if (followStatus && members.get("status") instanceof Number number
                    && number.intValue() == original.value()) {
                members.put("status", status.value());
            }
            return JsonText.value(members);
        }
        if (followStatus && problem.getStatus() == original.value()) {
            problem.setStatus(status.value());
        }
        return ProblemMembers.json(problem);
    }
}

package dev.ratelimiter.gateway;

import java.util.List;

import dev.ratelimiter.core.RequestAttributes;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;

/**
 * Renders the limiter's own answers as RFC 9457 problem documents ({@code application/problem+json}) with a stable
 * {@code error} code that clients can branch on, then lets the {@link RateLimitResponseCustomizer}s change them. Each
 * web flavour writes the {@link Rendered} result its own way; what a refusal says is decided here, once.
 *
 * <p>A 429 has the problem type of draft-ietf-httpapi-ratelimit-headers for an exceeded quota,
 * {@value #QUOTA_EXCEEDED}, with its {@code violated-policies} member: the names of the exceeded policies, the same
 * names as in the {@code RateLimit-Policy} field. A concurrency limit is one of those policies (the draft's
 * {@code concurrent-requests} quota unit), so its 429 has that type too. The 503s and the identity answers are
 * {@code about:blank}: neither is a quota the client used up.
 */
public final class RefusalRenderer {

    public static final MediaType PROBLEM_JSON = MediaType.APPLICATION_PROBLEM_JSON;

    /** The problem type for a request over one or more quota policies. */
    public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

    /** The quota-exceeded member listing the policies exceeded. */
    public static final String VIOLATED_POLICIES = "violated-policies";

    private static final RefusalRenderer DEFAULTS = new RefusalRenderer(List.of());

    /** Null without customizers: the default bodies are then written as text, with nothing to copy or map. */
    private final RefusalCustomizers customizers;

    /** @param customizers applied in this order to every answer */
    public RefusalRenderer(List<? extends RateLimitResponseCustomizer> customizers) {
        this.customizers = customizers.isEmpty() ? null : new RefusalCustomizers(customizers, System::nanoTime);
    }

    /** The default answers, no customizer. */
    public static RefusalRenderer defaults() {
        return DEFAULTS;
    }

    /** Whether any customizer runs: without one, a flavour need not look up what only customizers read. */
    public boolean customized() {
        return customizers != null;
    }

    /**
     * An answer as it is to be sent: its status, the headers (the given ones with the answer's own, or the
     * customizers' changed copy) and its body.
     *
     * @param headers the response headers so far (the rate-limit fields); the answer's own are set on them
     * @param request the request's attributes for the customizers, when the answer does not carry them; may be null
     * @param nativeExchange the flavour's own view of the exchange, for the customizers to read
     * ({@link RefusalContext#nativeExchange()}); may be null
     */
    public Rendered render(RefusalAnswer answer, HttpHeaders headers, RequestAttributes request,
            Object nativeExchange) {
        answer.headers(headers::set);
        headers.setContentType(PROBLEM_JSON);
        if (customizers != null) {
            RefusalContext context = new RefusalContext(answer.kind(), answer.ruleIds(), answer.retryAfterSeconds(),
                    answer.request() != null ? answer.request() : request, nativeExchange);
            Rendered customized = customizers.apply(headers, context, answer);
            if (customized != null) {
                return customized;
            }
        }
        return new Rendered(answer.status(), headers, answer.body());
    }

    /** An answer ready to send. */
    public record Rendered(HttpStatusCode status, HttpHeaders headers, byte[] body) {
    }
}

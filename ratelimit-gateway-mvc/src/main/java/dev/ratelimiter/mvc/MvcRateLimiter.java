package dev.ratelimiter.mvc;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.AdmissionRequest;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.Decision;
import dev.ratelimiter.gateway.RefusalAnswer;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.gateway.ResponseCharges;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.gateway.WarnOnce;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.web.servlet.function.ServerRequest;
import reactor.core.publisher.Mono;

/**
 * Decides every request a Gateway Server MVC route takes, on the servlet thread, before the route's own filters and
 * the proxying: allowed requests go on with the rate-limit fields on their response; refused ones are answered here
 * (the same 429/503/400/401 problem bodies as on WebFlux) and never reach the upstream. The decision is the WebFlux
 * flavour's: the same rule set, request attributes and {@link Admission}; only the waiting differs (see
 * {@link DecisionWait}).
 */
public final class MvcRateLimiter {

    private final RateLimitEvaluator evaluator;
    private final RequestIdentity identity;
    /** Who is calling when that is more than the headers; null: the headers, read directly (the hot path). */
    private final ServletIdentityResolver resolver;
    private final Admission admission;
    private final DecisionWait wait;
    private final Function<String, Map<String, Object>> routeMetadata;
    private final RefusalRenderer refusals;
    private final WarnOnce failedResolutions = new WarnOnce(LoggerFactory.getLogger(MvcRateLimiter.class));
    private final ResponseCharges responseCharges;

    /**
     * @param identity who is calling, from the request headers
     * @param routeMetadata a route's metadata by its id (empty when it has none)
     * @param waitBound the longest a request waits for its decision (the store timeout and a margin)
     * @param refusals renders the answers, through the {@code RateLimitResponseCustomizer}s it was made with
     */
    public MvcRateLimiter(RateLimitEvaluator evaluator, RequestIdentity identity, Admission admission,
            Duration waitBound, Function<String, Map<String, Object>> routeMetadata, RefusalRenderer refusals) {
        this(evaluator, identity, ServletIdentityResolver.fromHeaders(identity), admission, waitBound, routeMetadata,
                refusals);
    }

    /**
     * @param identity where the client's address is read (and, when {@code resolver} is the header resolver, every
     * other value)
     * @param resolver who the caller is
     */
    public MvcRateLimiter(RateLimitEvaluator evaluator, RequestIdentity identity, ServletIdentityResolver resolver,
            Admission admission, Duration waitBound, Function<String, Map<String, Object>> routeMetadata,
            RefusalRenderer refusals) {
        this(evaluator, identity, resolver, admission, waitBound, routeMetadata, refusals, ResponseCharges.NONE);
    }

    /**
     * As above, the rules charged from the response charged by {@code responseCharges} once it is written.
     */
    public MvcRateLimiter(RateLimitEvaluator evaluator, RequestIdentity identity, ServletIdentityResolver resolver,
            Admission admission, Duration waitBound, Function<String, Map<String, Object>> routeMetadata,
            RefusalRenderer refusals, ResponseCharges responseCharges) {
        this.responseCharges = responseCharges;
        this.refusals = refusals;
        this.evaluator = evaluator;
        this.identity = identity;
        this.resolver = resolver instanceof HeaderIdentity ? null : resolver;
        this.admission = admission;
        this.wait = new DecisionWait(waitBound);
        this.routeMetadata = routeMetadata;
    }

    /**
     * A route's metadata: its route properties' ({@code spring.cloud.gateway.server.webmvc.routes[].metadata}) over
     * the attributes its router function was built with (the only metadata a route written in Java has).
     */
    Map<String, Object> metadata(String routeId, Map<String, Object> attributes) {
        Map<String, Object> configured = routeMetadata.apply(routeId);
        if (attributes.isEmpty()) {
            return configured;
        }
        if (configured.isEmpty()) {
            return attributes;
        }
        Map<String, Object> merged = new HashMap<>(attributes);
        merged.putAll(configured);
        return merged;
    }

    /**
     * Decides a request the gateway route {@code routeId} took: its refusal (400, 401, 403, 429, 503), or null when
     * it may go on, the rate-limit fields then set on the servlet response.
     */
    RefusalRenderer.Rendered decide(ServerRequest request, String routeId, Map<String, Object> metadata,
            LimitedRequest limited) {
        // Read once: the tier, the identity the rules need and the decision all come from this one rule set.
        RuleSet rules = evaluator.rules();
        HttpHeaders headers = request.headers().asHttpHeaders();
        CallerIdentity caller = resolver == null ? identity.caller(headers) : identify(request, routeId);
        Decision decision = admission.decide(rules, caller, new AdmissionRequest(request.requestPath().value(),
                routeId, metadata, () -> clientIp(limited, headers), new ServletIdentityRequest(request, routeId)),
                limited.permits());
        if (decision.refusal() != null) {
            return answer(decision.refusal(), new HttpHeaders(), null, limited);
        }
        limited.attributes(decision.request());
        // The permits belong to the request, not to this call: the servlet filter gives them back once the response
        // is written, however the request ends.
        HttpHeaders rateLimitFields = new HttpHeaders();
        RefusalAnswer refused;
        Verdict verdict;
        try {
            verdict = wait.await(decision.verdict(), decision::undecided);
            refused = decision.judge(verdict, rateLimitFields);
        }
        finally {
            // however the wait and the judging end (a listener that throws, an interrupt), the decision's
            // observation is stopped: judged, failed, or else cancelled
            decision.ended();
        }
        if (refused != null) {
            return answer(refused, rateLimitFields, decision.request(), limited);
        }
        // On the servlet response itself: a handler's ServerResponse has read-only headers, and the proxied
        // response adds the upstream's headers to these.
        HttpServletResponse response = limited.response();
        rateLimitFields.forEach((name, values) -> values.forEach(value -> response.setHeader(name, value)));
        limited.responseCharge(responseCharges.pending(verdict));
        return null;
    }

    /** The resolver's answer; a failing resolver is a request without identity, never a 5xx. */
    private CallerIdentity identify(ServerRequest request, String routeId) {
        try {
            CallerIdentity caller = resolver.resolve(request, routeId);
            return caller != null ? caller : CallerIdentity.NONE;
        }
        catch (RuntimeException ex) {
            failedResolutions.warn("The identity resolver failed; deciding the request as one without identity", ex);
            return CallerIdentity.NONE;
        }
    }

    /** From the servlet's peer address, never its host name: nothing here may look a name up in DNS. */
    private String clientIp(LimitedRequest limited, HttpHeaders headers) {
        String address = limited.getRemoteAddr();
        return address == null ? null
                : identity.clientIp(InetSocketAddress.createUnresolved(address, limited.getRemotePort()), headers);
    }

    private RefusalRenderer.Rendered answer(RefusalAnswer refused, HttpHeaders headers, RequestAttributes attributes,
            LimitedRequest limited) {
        return refusals.render(refused, headers, attributes, limited);
    }
}

package dev.ratelimiter.gateway.webflux;

import java.time.Clock;
import java.util.Map;

import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPaths;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.AdmissionRequest;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.Decision;
import dev.ratelimiter.gateway.DecisionObservations;
import dev.ratelimiter.gateway.IdentityValuePolicy;
import dev.ratelimiter.gateway.RefusalAnswer;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import dev.ratelimiter.gateway.ResponseCharges;
import dev.ratelimiter.gateway.RouteMetadata;
import dev.ratelimiter.gateway.WarnOnce;
import io.micrometer.observation.Observation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/**
 * Decides every routed request before it is forwarded: allowed requests go on with the rate-limit headers on their
 * response; denied ones are answered with 429 here and never reach the upstream.
 *
 * <p>Route metadata {@value #ROUTE_CLASS_METADATA} names the route class (default {@value #DEFAULT_ROUTE_CLASS});
 * {@value #COST_METADATA} the tokens a request costs (default 1); {@code ratelimit-enabled: false} takes the route out.
 */
public final class RateLimitFilter implements GlobalFilter, Ordered {

    public static final String ROUTE_CLASS_METADATA = RouteMetadata.ROUTE_CLASS;
    public static final String COST_METADATA = RouteMetadata.COST;
    public static final String DEFAULT_ROUTE_CLASS = RouteMetadata.DEFAULT_ROUTE_CLASS;

    /**
     * Exchange attribute holding the request's {@link RequestAttributes}, for filters after this one. Spelled out: it
     * is documented by name and kept the name it had before the filter moved to this package.
     */
    public static final String REQUEST_ATTRIBUTE = "dev.ratelimiter.gateway.RateLimitFilter.request";

    private static final Logger logger = LoggerFactory.getLogger(RateLimitFilter.class);

    private final RateLimitEvaluator evaluator;
    private final RequestIdentity identity;
    private final RequestIdentityResolver resolver;
    /** The resolver when it reads headers only: then asked directly, without a Mono (the hot path). */
    private final RequestIdentity headers;
    private final Admission admission;
    private final int order;
    private final RefusalWriter refusalWriter;
    private final WarnOnce failedResolutions = new WarnOnce(logger);
    private final ResponseCharges responseCharges;

    public RateLimitFilter(RateLimitEvaluator evaluator, RequestIdentity identity, ApiKeyRefusals refusals,
            VerdictListener listener, Clock clock, int order) {
        this(evaluator, identity, refusals, ApiKeyFormat.ANY, listener, clock, order);
    }

    public RateLimitFilter(RateLimitEvaluator evaluator, RequestIdentity identity, ApiKeyRefusals refusals,
            ApiKeyFormat apiKeyFormat, VerdictListener listener, Clock clock, int order) {
        this(evaluator, identity, new HeaderIdentityResolver(identity), refusals, apiKeyFormat, listener, clock, order,
                RefusalWriter.defaults());
    }

    /**
     * @param identity where the client's address is read (and, when {@code resolver} is one too, everything else)
     * @param resolver who the caller is; its {@linkplain RequestIdentityResolver#describe description} of the API key
     * and its {@linkplain RequestIdentityResolver#challenge challenge} are asked once, here
     * @param refusalWriter writes every answer the filter gives itself (429, 503, the identity refusals)
     */
    public RateLimitFilter(RateLimitEvaluator evaluator, RequestIdentity identity, RequestIdentityResolver resolver,
            ApiKeyRefusals refusals, ApiKeyFormat apiKeyFormat, VerdictListener listener, Clock clock, int order,
            RefusalWriter refusalWriter) {
        this(evaluator, identity, resolver, refusals, apiKeyFormat, IdentityValuePolicy.ANY, IdentityValuePolicy.ANY,
                listener, clock, order, refusalWriter);
    }

    /**
     * As above, with what user and tenant ids must be ({@code users}, {@code tenants}).
     */
    public RateLimitFilter(RateLimitEvaluator evaluator, RequestIdentity identity, RequestIdentityResolver resolver,
            ApiKeyRefusals refusals, ApiKeyFormat apiKeyFormat, IdentityValuePolicy users,
            IdentityValuePolicy tenants, VerdictListener listener, Clock clock, int order,
            RefusalWriter refusalWriter) {
        this(evaluator, identity, resolver, refusals, apiKeyFormat, users, tenants, listener, clock, order,
                refusalWriter, DecisionObservations.OFF);
    }

    /**
     * As above, each decision observed by {@code observations} as a child of the request's own observation.
     */
    public RateLimitFilter(RateLimitEvaluator evaluator, RequestIdentity identity, RequestIdentityResolver resolver,
            ApiKeyRefusals refusals, ApiKeyFormat apiKeyFormat, IdentityValuePolicy users,
            IdentityValuePolicy tenants, VerdictListener listener, Clock clock, int order,
            RefusalWriter refusalWriter, DecisionObservations observations) {
        this(evaluator, identity, resolver, refusals, apiKeyFormat, users, tenants, listener, clock, order,
                refusalWriter, observations, ResponseCharges.NONE);
    }

    /**
     * As above, the rules charged from the response charged by {@code responseCharges} when it completes.
     */
    public RateLimitFilter(RateLimitEvaluator evaluator, RequestIdentity identity, RequestIdentityResolver resolver,
            ApiKeyRefusals refusals, ApiKeyFormat apiKeyFormat, IdentityValuePolicy users,
            IdentityValuePolicy tenants, VerdictListener listener, Clock clock, int order,
            RefusalWriter refusalWriter, DecisionObservations observations, ResponseCharges responseCharges) {
        this.responseCharges = responseCharges;
        this.evaluator = evaluator;
        this.identity = identity;
        this.resolver = resolver;
        this.headers = resolver instanceof HeaderIdentityResolver fromHeaders ? fromHeaders.identity() : null;
        this.admission = new Admission(evaluator, resolver, refusals, apiKeyFormat, users, tenants, listener, clock,
                observations);
        this.order = order;
        this.refusalWriter = refusalWriter;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
        Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
        if (route != null && !RouteMetadata.limited(route.getMetadata())) {
            // The route opted out (ratelimit-enabled: false): no decision, no fields, no permit.
            return chain.filter(exchange);
        }
        // Read once: the tier, the identity the rules need and the decision all come from this one rule set.
        RuleSet rules = evaluator.rules();
        if (headers != null) {
            return decide(exchange, chain, rules, headers.caller(exchange.getRequest().getHeaders()));
        }
        return Mono.defer(() -> resolver.resolve(exchange))
                .onErrorResume(failure -> {
                    failedResolutions.warn("The identity resolver failed; deciding the request as one without "
                            + "identity", failure);
                    return Mono.just(CallerIdentity.NONE);
                })
                .defaultIfEmpty(CallerIdentity.NONE)
                .flatMap(caller -> decide(exchange, chain, rules, caller));
    }

    private Mono<Void> decide(ServerWebExchange exchange, GatewayFilterChain chain, RuleSet rules,
            CallerIdentity caller) {
        if (admission.observed()) {
            // Spring WebFlux keeps the request's observation in the Reactor context: the decision's parent.
            return Mono.deferContextual(context -> decide(exchange, chain, rules, caller,
                    DecisionObservations.parentIn(context)));
        }
        return decide(exchange, chain, rules, caller, null);
    }

    private Mono<Void> decide(ServerWebExchange exchange, GatewayFilterChain chain, RuleSet rules,
            CallerIdentity caller, Observation parent) {
        Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
        ServerHttpRequest http = exchange.getRequest();
        AdmissionRequest request = new AdmissionRequest(http.getPath().value(), route != null ? route.getId() : null,
                route != null ? route.getMetadata() : Map.of(),
                () -> identity.clientIp(http.getRemoteAddress(), http.getHeaders()),
                new ExchangeIdentityRequest(exchange));
        RequestPermits permits = new RequestPermits();
        Decision decision = admission.decide(rules, caller, request, permits, parent);
        if (decision.refusal() != null) {
            return refusalWriter.write(exchange, decision.refusal());
        }
        exchange.getAttributes().put(REQUEST_ATTRIBUTE, decision.request());
        // The verdict may arrive on a Redis client thread or a timer thread; the rest of the chain (other filters,
        // the proxying) belongs on this connection's own event loop.
        return EventLoops.onRequestLoop(exchange, decision.verdict())
                .flatMap(verdict -> apply(decision, verdict, exchange, chain))
                // Permits are held until the response has been written, failed, or the client went away.
                .doFinally(signal -> {
                    permits.end();
                    decision.ended();
                });
    }

    private Mono<Void> apply(Decision decision, Verdict verdict, ServerWebExchange exchange,
            GatewayFilterChain chain) {
        RefusalAnswer refused = decision.judge(verdict, exchange.getResponse().getHeaders());
        if (refused != null) {
            return refusalWriter.write(exchange, refused);
        }
        ResponseCharges.Pending pending = responseCharges.pending(verdict);
        if (pending == null) {
            return chain.filter(exchange);
        }
        ServerHttpResponse response = exchange.getResponse();
        ChargedResponse charged = new ChargedResponse(response, pending);
        ServerWebExchange.Builder forwarded = exchange.mutate().response(charged);
        if (pending.readsBody()) {
            // the body is scanned as it passes: asked for unencoded, whatever encodings the client accepts
            forwarded.request(request -> request.headers(
                    headers -> headers.set(HttpHeaders.ACCEPT_ENCODING, "identity")));
        }
        return chain.filter(forwarded.build())
                .doFinally(signal -> pending.complete(signal == SignalType.ON_COMPLETE && charged.bodyEnded(),
                        response.getStatusCode() == null ? 0 : response.getStatusCode().value(),
                        response.getHeaders()));
    }

    /**
     * The request's attributes as this filter stored them on the exchange, for the filters after it; where it did not
     * run, what the matched route alone says ({@link RequestAttributes#ofRoute}).
     */
    public static RequestAttributes attributesOf(ServerWebExchange exchange, Route route) {
        RequestAttributes stored = exchange.getAttribute(REQUEST_ATTRIBUTE);
        return stored != null ? stored : RequestAttributes.ofRoute(route.getId(),
                RequestPaths.normalise(exchange.getRequest().getPath().value()), routeClassOf(route.getMetadata()));
    }

    /** The route class a route's metadata names, else {@value #DEFAULT_ROUTE_CLASS}. */
    static String routeClassOf(Map<String, Object> metadata) {
        return RouteMetadata.routeClass(metadata);
    }

    @Override
    public int getOrder() {
        return order;
    }
}

package dev.ratelimiter.autoconfigure.usage;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.ratelimiter.autoconfigure.rules.RuleProblems;
import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.UsageQuery;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.AdmissionRequest;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import dev.ratelimiter.gateway.webflux.RefusalWriter;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code GET /ratelimit/me} on the gateway's own port: the calling client's usage, the client found exactly as the
 * limiter finds it on a routed request (the same resolver, the same refusals of a missing, malformed, duplicated or
 * unknown identity, the same namespaces and tier), so a client reads its own buckets and can name no other: the query
 * takes only {@code route}, {@code path}, {@code routeClass} and {@code rule}, never an identity.
 *
 * <p>It is not counted against the caller's rules: a reading that spent would change what it reads. It is guarded
 * instead by a small bucket of its own per caller in this instance's memory ({@link #PER_SECOND} a second), so that
 * a client polling in a loop costs Redis at most that; past it, 429 with {@code Retry-After}. It runs after Spring
 * Security's filters (order 0), so identity from a verified token is there as it is for the routes; served before
 * any route, so a route to the same path is shadowed.
 */
public final class CallerUsageWebFilter implements WebFilter, Ordered {

    /** Readings a caller may make per second on one instance. */
    static final int PER_SECOND = 5;

    private static final Set<String> PARAMETERS = Set.of("route", "path", "routeClass", "rule");

    private static final Rule GUARD = new Rule("ratelimit-me", "ratelimit-me", Match.ANY,
            List.of(Dimension.API_KEY), new TokenBucketLimit(PER_SECOND, PER_SECOND, Duration.ofSeconds(1)), 1,
            Mode.ENFORCE, FailureMode.OPEN);

    private final String path;
    private final RateLimitEvaluator evaluator;
    private final RequestIdentityResolver resolver;
    private final RequestIdentity identity;
    private final Admission admission;
    private final UsageOperations operations;
    private final RefusalWriter refusals;
    private final ClientIds clientIds;
    private final LocalBucketStore guard = new LocalBucketStore(10_000);
    private final JsonMapper json = JsonMapper.builder().build();

    public CallerUsageWebFilter(String path, RateLimitEvaluator evaluator, RequestIdentityResolver resolver,
            RequestIdentity identity, Admission admission, UsageOperations operations, RefusalWriter refusals,
            ClientIds clientIds) {
        this.path = path;
        this.evaluator = evaluator;
        this.resolver = resolver;
        this.identity = identity;
        this.admission = admission;
        this.operations = operations;
        this.refusals = refusals;
        this.clientIds = clientIds;
    }

    @Override
    public int getOrder() {
        return 0;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest http = exchange.getRequest();
        if (!http.getPath().pathWithinApplication().value().equals(path)) {
            return chain.filter(exchange);
        }
        String instance = path;
        if (http.getMethod() != HttpMethod.GET && http.getMethod() != HttpMethod.HEAD) {
            return write(exchange, UsageOperations.onlyReads(instance));
        }
        for (Map.Entry<String, List<String>> parameter : http.getQueryParams().entrySet()) {
            if (!PARAMETERS.contains(parameter.getKey()) || parameter.getValue().size() > 1) {
                return write(exchange, RuleProblems.answer(instance, HttpStatus.BAD_REQUEST, "invalid_query", null,
                        "This reads your own usage: it takes route, path, routeClass and rule, each at most once, "
                                + "and never an identity."));
            }
        }
        RuleSet rules = evaluator.rules();
        return Mono.defer(() -> resolver.resolve(exchange))
                .onErrorResume(failure -> Mono.just(CallerIdentity.NONE))
                .defaultIfEmpty(CallerIdentity.NONE)
                .flatMap(caller -> read(exchange, rules, caller, instance));
    }

    private Mono<Void> read(ServerWebExchange exchange, RuleSet rules, CallerIdentity caller, String instance) {
        ServerHttpRequest http = exchange.getRequest();
        Admission.Counted counted = admission.count(rules, caller, new AdmissionRequest(
                http.getPath().value(), null, Map.of(), () -> identity.clientIp(http.getRemoteAddress(),
                        http.getHeaders())));
        if (counted.refusal() != null) {
            return refusals.write(exchange, counted.refusal());
        }
        RequestAttributes attributes = counted.attributes();
        if (attributes.apiKey() == null && attributes.user() == null && attributes.tenant() == null) {
            RulesApiOperations.Answer answer = RuleProblems.answer(instance, HttpStatus.UNAUTHORIZED,
                    "missing_identity", null, "Send the API key (or the credentials) your requests carry: the "
                            + "usage read is the caller's own.");
            return write(exchange, answer);
        }
        String who = attributes.apiKey() != null ? attributes.apiKey()
                : "user=" + attributes.user() + "\0tenant=" + attributes.tenant();
        Verdict guarded = guard.evaluateNow(List.of(new Check(GUARD, new BucketKey(clientIds.of(who), "me"), 1,
                false)));
        if (!guarded.allowed()) {
            RulesApiOperations.Answer answer = RuleProblems.answer(instance, HttpStatus.TOO_MANY_REQUESTS,
                    "too_many_reads", null, "Your usage was read " + PER_SECOND + " times in the last second "
                            + "here; read it again shortly.");
            answer.headers().set(HttpHeaders.RETRY_AFTER, "1");
            return write(exchange, answer);
        }
        Map<String, List<String>> parameters = http.getQueryParams();
        UsageQuery query;
        try {
            query = new UsageQuery(attributes.apiKey(), null, attributes.user(), attributes.tenant(),
                    attributes.clientIp(), first(parameters, "route"), first(parameters, "path"),
                    first(parameters, "routeClass"), attributes.tier(), first(parameters, "rule"));
        }
        catch (RuntimeException ex) {
            return write(exchange, RuleProblems.answer(instance, HttpStatus.BAD_REQUEST, "invalid_query", null,
                    ex.getMessage()));
        }
        return operations.answer(query, instance).flatMap(answer -> write(exchange, answer));
    }

    private static String first(Map<String, List<String>> parameters, String name) {
        List<String> values = parameters.get(name);
        return values == null || values.isEmpty() || values.get(0) == null || values.get(0).isEmpty() ? null
                : values.get(0);
    }

    private Mono<Void> write(ServerWebExchange exchange, RulesApiOperations.Answer answer) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(answer.status());
        response.getHeaders().addAll(answer.headers());
        byte[] body = answer.body() == null ? new byte[0] : json.writeValueAsBytes(answer.body());
        response.getHeaders().setContentLength(body.length);
        if (exchange.getRequest().getMethod() == HttpMethod.HEAD) {
            return response.setComplete();
        }
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }
}

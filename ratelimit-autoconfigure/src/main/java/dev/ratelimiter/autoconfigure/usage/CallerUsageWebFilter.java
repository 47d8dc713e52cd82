package dev.ratelimiter.autoconfigure.usage;

import java.util.Map;

import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.gateway.AdmissionRequest;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import dev.ratelimiter.gateway.webflux.RefusalWriter;
import org.springframework.core.Ordered;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code GET /ratelimit/me} on Spring Cloud Gateway's own port ({@link CallerUsage}): the caller found by the same
 * resolver as the limiter's filter, its refusals written as that filter writes them. It runs after Spring Security's
 * filters (order 0), so identity from a verified token is there as it is for the routes; and before any route, so a
 * route to the same path is shadowed. Nothing here blocks: the store's reply is written from the thread it lands on.
 */
public final class CallerUsageWebFilter implements WebFilter, Ordered {

    private final String path;
    private final RateLimitEvaluator evaluator;
    private final RequestIdentityResolver resolver;
    private final RequestIdentity identity;
    private final CallerUsage usage;
    private final RefusalWriter refusals;
    private final JsonMapper json = JsonMapper.builder().build();

    public CallerUsageWebFilter(String path, RateLimitEvaluator evaluator, RequestIdentityResolver resolver,
            RequestIdentity identity, CallerUsage usage, RefusalWriter refusals) {
        this.path = path;
        this.evaluator = evaluator;
        this.resolver = resolver;
        this.identity = identity;
        this.usage = usage;
        this.refusals = refusals;
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
        if (http.getMethod() != HttpMethod.GET && http.getMethod() != HttpMethod.HEAD) {
            return write(exchange, UsageOperations.onlyReads(path));
        }
        RuleSet rules = evaluator.rules();
        return Mono.defer(() -> resolver.resolve(exchange))
                .onErrorResume(failure -> Mono.just(CallerIdentity.NONE))
                .defaultIfEmpty(CallerIdentity.NONE)
                .flatMap(caller -> {
                    CallerUsage.Reply reply = usage.read(rules, caller, new AdmissionRequest(http.getPath().value(),
                            null, Map.of(), () -> identity.clientIp(http.getRemoteAddress(), http.getHeaders())),
                            http.getQueryParams(), path);
                    return reply.refusal() != null ? refusals.write(exchange, reply.refusal())
                            : reply.answer().flatMap(answer -> write(exchange, answer));
                });
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

package dev.ratelimiter.autoconfigure.mvc;

import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import dev.ratelimiter.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.autoconfigure.RateLimitUsageAutoConfiguration;
import dev.ratelimiter.autoconfigure.UsageApiProperties;
import dev.ratelimiter.autoconfigure.identity.AdapterSettings;
import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.autoconfigure.usage.CallerUsage;
import dev.ratelimiter.autoconfigure.usage.UsageOperations;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.UsageLookup;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.AdmissionRequest;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.RateLimitResponseCustomizer;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.mvc.ServletIdentityResolver;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The clients' own usage on Gateway Server MVC ({@code ratelimit.usage.me.enabled=true}): {@code GET /ratelimit/me}
 * ({@link CallerUsage}) as a router function ahead of every gateway route, the caller found by the same
 * {@link ServletIdentityResolver} as the limiter's, its refusals rendered as the limiter renders them. Not a gateway
 * route, so the limiter never counts it. The reading is waited for on the servlet thread, at most the store's longest
 * wait (the reader's own bound).
 */
@AutoConfiguration(after = { RateLimitMvcAutoConfiguration.class, RateLimitUsageAutoConfiguration.class,
        RateLimitAutoConfiguration.class })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = "tools.jackson.databind.json.JsonMapper")
@ConditionalOnBooleanProperty(name = "ratelimit.usage.me.enabled")
@ConditionalOnBean({ UsageLookup.class, RateLimitEvaluator.class, ServletIdentityResolver.class })
@EnableConfigurationProperties({ RateLimitProperties.class, UsageApiProperties.class })
public final class RateLimitMvcUsageMeAutoConfiguration {

    /** Beyond the reader's own bound, which answers first: only a reader that never answers meets this. */
    static final Duration BACKSTOP = Duration.ofSeconds(10);

    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    @ConditionalOnMissingBean(name = "rateLimitCallerUsage")
    RouterFunction<ServerResponse> rateLimitCallerUsage(RateLimitProperties properties, UsageApiProperties usage,
            RateLimitEvaluator evaluator, UsageLookup lookup, ClientIdKeyring clientIds,
            ServletIdentityResolver resolver, ObjectProvider<RateLimitResponseCustomizer> customizers) {
        String path = CallerUsage.path(usage);
        RequestIdentity identity = AdapterSettings.headerIdentity(properties, AdapterSettings.tierHeader(properties));
        Admission admission = new Admission(evaluator, resolver, AdapterSettings.apiKeyRefusals(properties),
                AdapterSettings.apiKeyFormat(properties), AdapterSettings.users(properties),
                AdapterSettings.tenants(properties), VerdictListener.NONE, Clock.systemUTC());
        CallerUsage callerUsage = CallerUsage.of(admission, lookup, properties, clientIds, evaluator);
        RefusalRenderer renderer = new RefusalRenderer(customizers.orderedStream().toList());
        return RouterFunctions.route()
                .GET(path, request -> read(request, path, evaluator, resolver, identity, callerUsage, renderer))
                .HEAD(path, request -> read(request, path, evaluator, resolver, identity, callerUsage, renderer))
                .route(RequestPredicates.path(path),
                        request -> RulesApiServletRoutes.write(UsageOperations.onlyReads(path)))
                .build();
    }

    private static ServerResponse read(ServerRequest request, String path, RateLimitEvaluator evaluator,
            ServletIdentityResolver resolver, RequestIdentity identity, CallerUsage usage,
            RefusalRenderer renderer) {
        CallerIdentity caller;
        try {
            caller = resolver.resolve(request, null);
        }
        catch (RuntimeException ex) {
            caller = null; // as on a route: a failing resolver is a caller without identity, never a 5xx
        }
        HttpHeaders headers = request.headers().asHttpHeaders();
        String address = request.servletRequest().getRemoteAddr();
        CallerUsage.Reply reply = usage.read(evaluator.rules(), caller != null ? caller : CallerIdentity.NONE,
                new AdmissionRequest(request.requestPath().value(), null, Map.of(), () -> address == null ? null
                        : identity.clientIp(InetSocketAddress.createUnresolved(address,
                                request.servletRequest().getRemotePort()), headers)),
                request.params(), path);
        if (reply.refusal() != null) {
            RefusalRenderer.Rendered refusal = renderer.render(reply.refusal(), new HttpHeaders(), null,
                    request.servletRequest());
            return ServerResponse.status(refusal.status()).headers(sent -> sent.addAll(refusal.headers()))
                    .body(refusal.body());
        }
        RulesApiOperations.Answer answer = reply.answer().block(BACKSTOP);
        return RulesApiServletRoutes.write(answer);
    }
}

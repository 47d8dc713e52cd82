package dev.ratelimiter.autoconfigure;

import java.time.Clock;

import dev.ratelimiter.autoconfigure.identity.AdapterSettings;
import dev.ratelimiter.autoconfigure.usage.CallerUsage;
import dev.ratelimiter.autoconfigure.usage.CallerUsageWebFilter;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.UsageLookup;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import dev.ratelimiter.gateway.webflux.HeaderIdentityResolver;
import dev.ratelimiter.gateway.webflux.RefusalWriter;
import dev.ratelimiter.gateway.webflux.TimeBoundIdentityResolver;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;

/**
 * The clients' own usage on Spring Cloud Gateway's port ({@code ratelimit.usage.me.enabled=true}): {@code GET
 * /ratelimit/me} answered by {@link CallerUsageWebFilter} with the caller found as the limiter's filter finds it. Off
 * by default; Gateway Server MVC has its own wiring ({@code RateLimitMvcUsageMeAutoConfiguration}).
 */
@AutoConfiguration(after = { RateLimitGatewayAutoConfiguration.class, RateLimitUsageAutoConfiguration.class })
@ConditionalOnClass(name = { "dev.ratelimiter.gateway.webflux.RateLimitFilter",
        "tools.jackson.databind.json.JsonMapper" })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "ratelimit.usage.me.enabled")
@ConditionalOnBean({ UsageLookup.class, RateLimitEvaluator.class, RefusalWriter.class })
public final class RateLimitUsageMeAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    CallerUsageWebFilter rateLimitCallerUsage(RateLimitProperties properties, UsageApiProperties usage,
            RateLimitEvaluator evaluator, UsageLookup lookup, ClientIdKeyring clientIds,
            ObjectProvider<RequestIdentityResolver> resolvers, RefusalWriter refusalWriter) {
        String path = CallerUsage.path(usage);
        RequestIdentity requestIdentity = AdapterSettings.headerIdentity(properties, null);
        RequestIdentityResolver resolver = TimeBoundIdentityResolver.bound(
                resolvers.getIfAvailable(() -> new HeaderIdentityResolver(requestIdentity)),
                properties.getIdentity().getResolveTimeout());
        Admission admission = new Admission(evaluator, resolver, AdapterSettings.apiKeyRefusals(properties),
                AdapterSettings.apiKeyFormat(properties), AdapterSettings.users(properties),
                AdapterSettings.tenants(properties), VerdictListener.NONE, Clock.systemUTC());
        return new CallerUsageWebFilter(path, evaluator, resolver, requestIdentity,
                CallerUsage.of(admission, lookup, properties, clientIds, evaluator), refusalWriter);
    }
}

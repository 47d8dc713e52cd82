package dev.ratelimiter.autoconfigure;

import java.time.Clock;

import dev.ratelimiter.autoconfigure.identity.AdapterSettings;
import dev.ratelimiter.autoconfigure.rules.RulesApiAccess;
import dev.ratelimiter.autoconfigure.usage.CallerUsageWebFilter;
import dev.ratelimiter.autoconfigure.usage.UsageOperations;
import dev.ratelimiter.autoconfigure.usage.UsageQueries;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.InvalidLimitException;
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
 * The clients' own usage on the gateway's port ({@code ratelimit.usage.me.enabled=true}): {@code GET /ratelimit/me}
 * answered by {@link CallerUsageWebFilter} with the caller found as the limiter's filter finds it. Spring Cloud
 * Gateway (WebFlux) only; off by default.
 */
@AutoConfiguration(after = { RateLimitGatewayAutoConfiguration.class, RateLimitUsageAutoConfiguration.class })
@ConditionalOnClass(name = "dev.ratelimiter.gateway.webflux.RateLimitFilter")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "ratelimit.usage.me.enabled")
@ConditionalOnBean({ UsageLookup.class, RateLimitEvaluator.class, RefusalWriter.class })
public final class RateLimitUsageMeAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    CallerUsageWebFilter rateLimitCallerUsage(RateLimitProperties properties, UsageApiProperties usage,
            RateLimitEvaluator evaluator, UsageLookup lookup, ClientIdKeyring clientIds,
            ObjectProvider<RequestIdentityResolver> resolvers, RefusalWriter refusalWriter) {
        String path = usage.getMe().getPath();
        if (path == null || !path.matches("/[A-Za-z0-9._~/-]*")) {
            throw new InvalidLimitException("ratelimit.usage.me.path", "ratelimit.usage.me.path is '" + path
                    + "': give a path from the root of letters, digits, '/', '.', '_', '~' or '-' (/ratelimit/me).");
        }
        RequestIdentity requestIdentity = AdapterSettings.headerIdentity(properties, null);
        RequestIdentityResolver resolver = TimeBoundIdentityResolver.bound(
                resolvers.getIfAvailable(() -> new HeaderIdentityResolver(requestIdentity)),
                properties.getIdentity().getResolveTimeout());
        Admission admission = new Admission(evaluator, resolver, AdapterSettings.apiKeyRefusals(properties),
                AdapterSettings.apiKeyFormat(properties), AdapterSettings.users(properties),
                AdapterSettings.tenants(properties), VerdictListener.NONE, Clock.systemUTC());
        UsageOperations operations = new UsageOperations(lookup,
                new UsageQueries(AdapterSettings.apiKeyFormat(properties)), clientIds.current(),
                RulesApiAccess.OPEN, evaluator.region());
        return new CallerUsageWebFilter(path, evaluator, resolver, requestIdentity, admission, operations,
                refusalWriter, clientIds.current());
    }
}

package dev.ratelimiter.autoconfigure;

import java.time.Clock;

import dev.ratelimiter.autoconfigure.identity.AdapterSettings;
import dev.ratelimiter.core.FallbackCharges;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.DecisionObservations;
import dev.ratelimiter.gateway.RateLimitResponseCustomizer;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import dev.ratelimiter.gateway.ResponseCharges;
import dev.ratelimiter.gateway.webflux.ClientHeaderStripping;
import dev.ratelimiter.gateway.webflux.HeaderIdentityResolver;
import dev.ratelimiter.gateway.webflux.RateLimitFilter;
import dev.ratelimiter.gateway.webflux.RefusalWriter;
import dev.ratelimiter.gateway.webflux.TimeBoundIdentityResolver;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.context.annotation.Bean;

/**
 * The Spring Cloud Gateway global filter that rate-limits every routed request, and the writer of the answers it gives
 * itself.
 */
@AutoConfiguration(after = { RateLimitAutoConfiguration.class, RateLimitActuatorAutoConfiguration.class })
@ConditionalOnClass(value = GlobalFilter.class, name = "dev.ratelimiter.gateway.webflux.RateLimitFilter")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitGatewayAutoConfiguration {

    /**
     * Writes the limiter's own answers (429, 503, the identity refusals), changed by every
     * {@link RateLimitResponseCustomizer} bean in order.
     */
    @Bean
    @ConditionalOnMissingBean
    RefusalWriter rateLimitRefusalWriter(ObjectProvider<RateLimitResponseCustomizer> customizers) {
        return new RefusalWriter(customizers.orderedStream().toList());
    }

    /**
     * Removes the identity headers {@code ratelimit.identity.strip-headers} names from every request before anything
     * reads them (none by default).
     */
    @Bean
    @ConditionalOnMissingBean
    ClientHeaderStripping rateLimitClientHeaderStripping(RateLimitProperties properties) {
        return new ClientHeaderStripping(properties.getIdentity().getStripHeaders());
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RateLimitEvaluator.class)
    RateLimitFilter rateLimitFilter(RateLimitEvaluator evaluator, RateLimitProperties properties,
            ObjectProvider<VerdictListener> listeners, ObjectProvider<RequestIdentityResolver> resolvers,
            RefusalWriter refusalWriter, ObjectProvider<DecisionObservations> observations,
            ObjectProvider<StoreStack> stacks, ObjectProvider<ResponseCharges.Listener> chargeListeners) {
        ApiKeyRefusals refusals = AdapterSettings.apiKeyRefusals(properties);
        AdapterSettings.rejectRemovedSettings(properties);
        RequestIdentity requestIdentity = AdapterSettings.headerIdentity(properties, null);
        RequestIdentityResolver resolver = resolvers.getIfAvailable(() -> new HeaderIdentityResolver(requestIdentity));
        return new RateLimitFilter(evaluator, requestIdentity,
                TimeBoundIdentityResolver.bound(resolver, properties.getIdentity().getResolveTimeout()),
                refusals, AdapterSettings.apiKeyFormat(properties), AdapterSettings.users(properties),
                AdapterSettings.tenants(properties), VerdictListener.all(listeners.orderedStream().toList()),
                Clock.systemUTC(), properties.getFilterOrder(), refusalWriter,
                observations.getIfAvailable(() -> DecisionObservations.OFF),
                responseCharges(stacks, chargeListeners));
    }

    /**
     * Charged through our store stack's after-the-fact charge; an application's own store (no stack) charges only the
     * minimum up front.
     */
    static ResponseCharges responseCharges(ObjectProvider<StoreStack> stacks,
            ObjectProvider<ResponseCharges.Listener> listeners) {
        StoreStack stack = stacks.getIfAvailable();
        return ResponseCharges.of(stack == null ? FallbackCharges.NONE : stack.responseCharges(),
                listeners.orderedStream().toList());
    }
}

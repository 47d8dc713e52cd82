package dev.ratelimiter.autoconfigure.mvc;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

import dev.ratelimiter.autoconfigure.RateLimitActuatorAutoConfiguration;
import dev.ratelimiter.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimiter.autoconfigure.RateLimitProperties;
import dev.ratelimiter.autoconfigure.identity.AdapterSettings;
import dev.ratelimiter.core.FallbackCharges;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.DecisionObservations;
import dev.ratelimiter.gateway.RateLimitResponseCustomizer;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.gateway.ResponseCharges;
import dev.ratelimiter.mvc.MvcLoadShedding;
import dev.ratelimiter.mvc.MvcRateLimiter;
import dev.ratelimiter.mvc.RateLimitServletFilter;
import dev.ratelimiter.mvc.RefusedRequestExceptionResolver;
import dev.ratelimiter.mvc.RouteMetadataLookup;
import dev.ratelimiter.mvc.RouterFunctionLimiting;
import dev.ratelimiter.mvc.ServletClientHeaderStripping;
import dev.ratelimiter.mvc.ServletIdentityResolver;
import dev.ratelimiter.mvc.UpstreamCallTracking;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.cloud.gateway.server.mvc.config.GatewayMvcProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;

/**
 * The limiter in front of every Spring Cloud Gateway Server MVC route: the same core, rules, store and answers as the
 * WebFlux flavour, deciding on the servlet thread with a bounded wait. Identity comes from {@code ratelimit.identity.*}
 * as on WebFlux (a {@link ServletIdentityResolver} bean replaces it); every {@link RateLimitResponseCustomizer} bean
 * changes the answers, as on WebFlux.
 */
@AutoConfiguration(after = { RateLimitAutoConfiguration.class, RateLimitActuatorAutoConfiguration.class },
        afterName = "org.springframework.cloud.gateway.server.mvc.GatewayServerMvcAutoConfiguration")
@ConditionalOnClass({ MvcUtils.class, GatewayMvcProperties.class })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitMvcAutoConfiguration {

    /**
     * Above the store timeout, which the decision already applies: only a limiter stuck elsewhere is waited on this
     * long, and never longer.
     */
    static final Duration WAIT_MARGIN = Duration.ofMillis(200);

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RateLimitEvaluator.class)
    MvcRateLimiter rateLimitMvcLimiter(RateLimitEvaluator evaluator, RateLimitProperties properties,
            ObjectProvider<VerdictListener> listeners, ObjectProvider<GatewayMvcProperties> gateway,
            ObjectProvider<RateLimitResponseCustomizer> customizers, ServletIdentityResolver resolver,
            ObjectProvider<DecisionObservations> observations, ObjectProvider<StoreStack> stacks,
            ObjectProvider<ResponseCharges.Listener> chargeListeners) {
        // the client address is read with the header identity's settings whoever names the caller
        RequestIdentity identity = AdapterSettings.headerIdentity(properties, AdapterSettings.tierHeader(properties));
        Admission admission = new Admission(evaluator, resolver, AdapterSettings.apiKeyRefusals(properties),
                AdapterSettings.apiKeyFormat(properties), AdapterSettings.users(properties),
                AdapterSettings.tenants(properties), VerdictListener.all(listeners.orderedStream().toList()),
                // no parent given: Micrometer takes the request thread's current observation (the servlet's)
                Clock.systemUTC(), observations.getIfAvailable(() -> DecisionObservations.OFF));
        AdapterSettings.rejectRemovedSettings(properties);
        return new MvcRateLimiter(evaluator, identity, resolver, admission,
                properties.getStore().effectiveMaxWait().plus(WAIT_MARGIN),
                new RouteMetadataLookup(gateway.getIfAvailable(GatewayMvcProperties::new)),
                new RefusalRenderer(customizers.orderedStream().toList()),
                // charged through our store stack's after-the-fact charge; an application's own store: the minimum
                ResponseCharges.of(stacks.getIfAvailable() == null ? FallbackCharges.NONE
                        : stacks.getIfAvailable().responseCharges(), chargeListeners.orderedStream().toList()));
    }

    /**
     * Who is calling, from {@code ratelimit.identity.*} (the headers by default; the authenticated principal, its
     * token's claims or an expression when configured), checked as on WebFlux. An application's own bean replaces it.
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RateLimitEvaluator.class)
    ServletIdentityResolver rateLimitServletIdentityResolver(RateLimitProperties properties,
            ApplicationContext context) {
        return MvcIdentitySettings.resolver(properties, context.getClassLoader());
    }

    /**
     * Hides the identity headers {@code ratelimit.identity.strip-headers} names from every filter after it, Spring
     * Security's included (registered first of all; off when it names none).
     */
    @Bean
    @ConditionalOnMissingBean(name = "rateLimitClientHeaderStripping")
    FilterRegistrationBean<ServletClientHeaderStripping> rateLimitClientHeaderStripping(
            RateLimitProperties properties) {
        List<String> names = properties.getIdentity().getStripHeaders();
        FilterRegistrationBean<ServletClientHeaderStripping> registration = new FilterRegistrationBean<>(
                new ServletClientHeaderStripping(names));
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
        registration.setEnabled(!names.isEmpty());
        return registration;
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(MvcRateLimiter.class)
    RateLimitServletFilter rateLimitServletFilter() {
        return new RateLimitServletFilter();
    }

    /** Answers a refused request whose refusal reached Spring MVC as an exception (async work, a wrapping filter). */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(MvcRateLimiter.class)
    RefusedRequestExceptionResolver rateLimitRefusedRequestExceptionResolver() {
        return new RefusedRequestExceptionResolver();
    }

    /** Static: a post-processor is made before the other beans, and must not make this configuration early. */
    @Bean
    static RouterFunctionLimiting rateLimitRouterFunctions(ObjectProvider<MvcRateLimiter> limiter,
            ObjectProvider<MvcLoadShedding> shedding) {
        return new RouterFunctionLimiting(limiter, shedding);
    }

    /**
     * Permits and tickets count until a route's upstream call returns, even past a timeout that answered the client.
     * Static for the same reason; it advises the gateway's proxy exchange whether or not the limiter is on (a request
     * the limiter does not follow is called as before).
     */
    @Bean
    static UpstreamCallTracking rateLimitUpstreamCallTracking() {
        return new UpstreamCallTracking();
    }
}

package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.metrics.LoadShedderMeters;
import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.LoadShedders;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.RateLimitResponseCustomizer;
import dev.ratelimiter.gateway.webflux.LoadSheddingFilter;
import dev.ratelimiter.gateway.webflux.RefusalWriter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.context.annotation.Bean;

/**
 * Priority load shedding in front of the upstreams listed under {@code ratelimit.shedding.upstreams}: one
 * {@link LoadShedder} per upstream, a gateway filter right after the rate limiter, and per-upstream metrics.
 */
@AutoConfiguration(after = { RateLimitGatewayAutoConfiguration.class, RateLimitEventsAutoConfiguration.class,
        RateLimitActuatorAutoConfiguration.class })
@ConditionalOnClass(value = GlobalFilter.class, name = "dev.ratelimiter.gateway.webflux.RateLimitFilter")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = { "ratelimit.enabled", "ratelimit.shedding.enabled" }, matchIfMissing = true)
@EnableConfigurationProperties({ LoadSheddingProperties.class, RateLimitProperties.class })
public final class RateLimitSheddingAutoConfiguration {

    /** Every configured upstream's shedder, validated at start-up. */
    @Bean
    @ConditionalOnMissingBean
    LoadShedders rateLimitLoadShedders(LoadSheddingProperties properties,
            ObjectProvider<MeterRegistry> registries) {
        return LoadShedderMeters.shedders(properties, registries);
    }

    @Bean
    @ConditionalOnMissingBean
    LoadSheddingFilter rateLimitLoadSheddingFilter(LoadShedders shedders, LoadSheddingProperties properties,
            RateLimitProperties rateLimit, ObjectProvider<VerdictListener> listeners,
            ObjectProvider<RefusalWriter> refusalWriters, ObjectProvider<RateLimitResponseCustomizer> customizers) {
        String header = properties.getPriorityHeader();
        int order = properties.getFilterOrder() != null ? properties.getFilterOrder() : rateLimit.getFilterOrder() + 1;
        return new LoadSheddingFilter(shedders.byRoute(), VerdictListener.all(listeners.orderedStream().toList()),
                shedders.defaultPriority(),
                header == null || header.isBlank() ? null : header.trim(), properties.isTrustPriorityHeader(),
                properties.getRetryAfter(), order,
                // The gateway auto-configuration's writer; the customizers directly when that one is excluded.
                refusalWriters.getIfAvailable(() -> new RefusalWriter(customizers.orderedStream().toList())));
    }
}

package dev.ratelimiter.autoconfigure.mvc;

import dev.ratelimiter.autoconfigure.LoadSheddingProperties;
import dev.ratelimiter.autoconfigure.RateLimitActuatorAutoConfiguration;
import dev.ratelimiter.autoconfigure.RateLimitEventsAutoConfiguration;
import dev.ratelimiter.autoconfigure.metrics.LoadShedderMeters;
import dev.ratelimiter.core.LoadShedders;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.RateLimitResponseCustomizer;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.mvc.MvcLoadShedding;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.context.annotation.Bean;

/**
 * Priority load shedding on Gateway Server MVC, under the WebFlux flavour's conditions and
 * {@code ratelimit.shedding.*} settings: the same {@link LoadShedders} and meters, applied behind the limiter by the
 * router functions it wraps (see {@link MvcLoadShedding}).
 */
@AutoConfiguration(before = RateLimitMvcAutoConfiguration.class,
        after = { RateLimitEventsAutoConfiguration.class, RateLimitActuatorAutoConfiguration.class })
@ConditionalOnClass(MvcUtils.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = { "ratelimit.enabled", "ratelimit.shedding.enabled" }, matchIfMissing = true)
@EnableConfigurationProperties(LoadSheddingProperties.class)
public final class RateLimitMvcSheddingAutoConfiguration {

    /** Every configured upstream's shedder, validated at start-up. */
    @Bean
    @ConditionalOnMissingBean
    LoadShedders rateLimitLoadShedders(LoadSheddingProperties properties, ObjectProvider<MeterRegistry> registries) {
        return LoadShedderMeters.shedders(properties, registries);
    }

    @Bean
    @ConditionalOnMissingBean
    MvcLoadShedding rateLimitMvcLoadShedding(LoadShedders shedders, LoadSheddingProperties properties,
            ObjectProvider<VerdictListener> listeners, ObjectProvider<RateLimitResponseCustomizer> customizers) {
        return new MvcLoadShedding(shedders.byRoute(), VerdictListener.all(listeners.orderedStream().toList()),
                shedders.defaultPriority(), properties.getPriorityHeader(), properties.isTrustPriorityHeader(),
                properties.getRetryAfter(), new RefusalRenderer(customizers.orderedStream().toList()));
    }
}

package dev.ratelimiter.autoconfigure;

import java.time.Clock;

import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.MissingApiKeyPolicy;
import dev.ratelimiter.gateway.RateLimitFilter;
import dev.ratelimiter.gateway.RequestIdentity;
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
import org.springframework.http.HttpStatusCode;

/**
 * The Spring Cloud Gateway global filter that rate-limits every routed request.
 */
@AutoConfiguration(after = { RateLimitAutoConfiguration.class, RateLimitActuatorAutoConfiguration.class })
@ConditionalOnClass(GlobalFilter.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitGatewayAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RateLimitEvaluator.class)
    RateLimitFilter rateLimitFilter(RateLimitEvaluator evaluator, RateLimitProperties properties,
            ObjectProvider<VerdictListener> listeners) {
        RateLimitProperties.ApiKey apiKey = properties.getApiKey();
        RateLimitProperties.Identity identity = properties.getIdentity();
        MissingApiKeyPolicy missing = new MissingApiKeyPolicy(
                apiKey.getWhenMissing() == RateLimitProperties.MissingKeyAction.REJECT,
                HttpStatusCode.valueOf(apiKey.getMissingStatus()));
        RequestIdentity requestIdentity = new RequestIdentity(apiKey.getHeader(), identity.getUserHeader(),
                identity.getTenantHeader(), identity.getTrustedProxyHops());
        return new RateLimitFilter(evaluator, requestIdentity, missing, VerdictListener.all(listeners.orderedStream().toList()),
                Clock.systemUTC(), properties.getFilterOrder());
    }
}

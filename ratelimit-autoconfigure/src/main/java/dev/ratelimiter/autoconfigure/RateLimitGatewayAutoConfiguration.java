package dev.ratelimiter.autoconfigure;

import java.time.Clock;

import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.gateway.MissingApiKeyPolicy;
import dev.ratelimiter.gateway.RateLimitFilter;
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
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass(GlobalFilter.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitGatewayAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RateLimitEvaluator.class)
    RateLimitFilter rateLimitFilter(RateLimitEvaluator evaluator, RateLimitProperties properties) {
        RateLimitProperties.ApiKey apiKey = properties.getApiKey();
        MissingApiKeyPolicy missing = new MissingApiKeyPolicy(apiKey.getHeader(),
                apiKey.getWhenMissing() == RateLimitProperties.MissingKeyAction.REJECT,
                HttpStatusCode.valueOf(apiKey.getMissingStatus()));
        return new RateLimitFilter(evaluator, missing, Clock.systemUTC(), properties.getFilterOrder());
    }
}

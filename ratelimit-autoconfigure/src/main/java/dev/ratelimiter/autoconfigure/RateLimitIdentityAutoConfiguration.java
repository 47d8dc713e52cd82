package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.identity.WebFluxIdentityResolvers;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * Who is calling, for the gateway filter: the {@link RequestIdentityResolver} {@code ratelimit.identity.*} describes
 * (the request headers by default; the authenticated principal, its token's claims, an expression or a Spring Cloud
 * Gateway {@code KeyResolver} when configured). An application's own resolver bean replaces it. Claims need Spring
 * Security's OAuth2 resource server on the classpath; without it the rest works, and a claim source fails the start-up
 * saying so.
 */
@AutoConfiguration(before = RateLimitGatewayAutoConfiguration.class)
@ConditionalOnClass(value = GlobalFilter.class, name = "dev.ratelimiter.gateway.webflux.RateLimitFilter")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitIdentityAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RequestIdentityResolver rateLimitIdentityResolver(RateLimitProperties properties, BeanFactory beans,
            ApplicationContext context) {
        return WebFluxIdentityResolvers.of(properties, beans, context.getClassLoader());
    }
}

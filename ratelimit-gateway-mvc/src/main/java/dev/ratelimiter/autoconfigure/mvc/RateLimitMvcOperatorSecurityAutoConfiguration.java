package dev.ratelimiter.autoconfigure.mvc;

import dev.ratelimiter.autoconfigure.OnOperatorSecurityCondition;
import dev.ratelimiter.autoconfigure.OperatorSecurityProperties;
import dev.ratelimiter.autoconfigure.RateLimitOperatorSecurityAutoConfiguration;
import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.Environment;

/**
 * The operator accounts on the servlet flavour, wherever the actuator endpoints leave loopback (the same rule and
 * settings, {@code ratelimit.management.security.*}, as on WebFlux). The filter that asks for them is
 * {@link OperatorSecurityMvcManagementContextConfiguration}, a Spring Security chain as on WebFlux; without Spring
 * Security on the classpath the start-up stops instead.
 */
@AutoConfiguration
@ConditionalOnClass(Endpoint.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Conditional(OnOperatorSecurityCondition.class)
@EnableConfigurationProperties(OperatorSecurityProperties.class)
public final class RateLimitMvcOperatorSecurityAutoConfiguration {

    // Made at start-up even under spring.main.lazy-initialization: it is where a missing Spring Security stops the
    // start-up, and nothing else may ask for it before a request reaches the endpoints unauthenticated.
    @Bean
    @Lazy(false)
    OperatorAccounts rateLimitOperatorAccounts(OperatorSecurityProperties properties, Environment environment,
            ApplicationContext context) {
        return RateLimitOperatorSecurityAutoConfiguration.accounts(properties, environment, context.getClassLoader(),
                OperatorSecurityMvcManagementContextConfiguration.HTTP_SECURITY);
    }
}

package dev.ratelimiter.autoconfigure.mvc;

import dev.ratelimiter.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimiter.core.RuleAdmin;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The start-up refusal of operator endpoints and a rules API left unauthenticated beyond loopback
 * ({@link UnauthenticatedOperatorEndpoints}) on the servlet flavour, wherever they exist: both need the rule admin.
 * On its own, and not replaceable, so that an application's own limiter, filter or endpoint beans keep it.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
public final class RateLimitMvcOperatorExposureAutoConfiguration {

    @Bean
    @ConditionalOnBean(RuleAdmin.class)
    UnauthenticatedOperatorEndpoints rateLimitUnauthenticatedOperatorEndpoints(ApplicationContext context) {
        return new UnauthenticatedOperatorEndpoints(context.getEnvironment(), context.getClassLoader(), context);
    }
}

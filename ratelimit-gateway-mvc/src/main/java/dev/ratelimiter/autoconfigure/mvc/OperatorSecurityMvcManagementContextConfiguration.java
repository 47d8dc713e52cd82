package dev.ratelimiter.autoconfigure.mvc;

import dev.ratelimiter.autoconfigure.OnOperatorSecurityCondition;
import dev.ratelimiter.autoconfigure.OperatorSecurityProperties;
import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.autoconfigure.security.OperatorEndpointExposure;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.env.Environment;

/**
 * The Spring Security chain that authenticates the actuator endpoints and the rules API on the servlet flavour
 * ({@link OperatorSecurityServletFilter}), in the context that serves them: a management port's own (the whole
 * port) or the application's (only their paths: the gateway's routes never see it and need no operator credentials).
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnClass(name = OperatorSecurityMvcManagementContextConfiguration.HTTP_SECURITY)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Conditional(OnOperatorSecurityCondition.class)
public class OperatorSecurityMvcManagementContextConfiguration {

    /**
     * Spring Security's servlet configuration: without it the accounts' auto-configuration stops the start-up (the
     * endpoints are never served open because a class is missing).
     */
    static final String HTTP_SECURITY = "org.springframework.security.config.annotation.web.builders.HttpSecurity";

    /** Before any other filter, an application's own Spring Security chain (order -100) included, as on WebFlux. */
    static final int ORDER = -101;

    @Bean
    FilterRegistrationBean<OperatorSecurityServletFilter> rateLimitOperatorSecurityFilter(OperatorAccounts accounts,
            PathMappedEndpoints endpoints, OperatorSecurityProperties properties, Environment environment) {
        OperatorSecurityServletFilter filter = OperatorSecurityServletFilter.of(accounts, new OperatorPaths(endpoints,
                properties.getPublicEndpoints(), properties.getViewerEndpoints(),
                OperatorEndpointExposure.of(environment).separatePort(), RulesApiOperations.mountPath(environment)));
        FilterRegistrationBean<OperatorSecurityServletFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setOrder(ORDER);
        registration.setName("rateLimitOperatorSecurityFilter");
        return registration;
    }
}

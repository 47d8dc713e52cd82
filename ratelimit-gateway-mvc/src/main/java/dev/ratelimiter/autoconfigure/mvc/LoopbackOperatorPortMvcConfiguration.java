package dev.ratelimiter.autoconfigure.mvc;

import java.util.List;

import dev.ratelimiter.autoconfigure.OnLoopbackOperatorPortCondition;
import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.autoconfigure.security.OperatorEndpointExposure;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.env.Environment;

/**
 * Where the actuator endpoints are served on loopback without authentication, the filter that answers only requests
 * addressed to loopback, in the context that serves them: a management port's own (the whole port) or the
 * application's (only the endpoints' and the rules API's paths: the gateway's routes never see it).
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Conditional(OnLoopbackOperatorPortCondition.class)
public class LoopbackOperatorPortMvcConfiguration {

    @Bean
    FilterRegistrationBean<LoopbackOnlyServletFilter> rateLimitLoopbackOnlyFilter(PathMappedEndpoints endpoints,
            Environment environment) {
        LoopbackOnlyServletFilter filter = new LoopbackOnlyServletFilter(new OperatorPaths(endpoints, List.of(),
                List.of(), OperatorEndpointExposure.loopbackOnly(environment).separatePort(),
                RulesApiOperations.mountPath(environment)));
        FilterRegistrationBean<LoopbackOnlyServletFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setOrder(OperatorSecurityMvcManagementContextConfiguration.ORDER);
        registration.setName("rateLimitLoopbackOnlyFilter");
        return registration;
    }
}

package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.rules.RulesApiMount;
import dev.ratelimiter.autoconfigure.security.LoopbackOnly;
import dev.ratelimiter.autoconfigure.security.LoopbackOnlyFilter;
import dev.ratelimiter.autoconfigure.security.OperatorEndpointExposure;
import dev.ratelimiter.autoconfigure.security.OperatorRequests;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.web.server.WebFilter;

/**
 * Where the actuator endpoints are served on loopback without authentication, the filter that answers only requests
 * addressed to loopback ({@link LoopbackOnly}), in the context that serves them: a management port's own (the whole
 * port), or the application's (only the endpoints' and the rules API's paths).
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Conditional(OnLoopbackOperatorPortCondition.class)
public class LoopbackOperatorPortConfiguration {

    @Bean
    @Order(OperatorSecurityManagementContextConfiguration.ORDER)
    WebFilter rateLimitLoopbackOnlyFilter(PathMappedEndpoints endpoints, Environment environment) {
        if (OperatorEndpointExposure.loopbackOnly(environment).separatePort()) {
            return new LoopbackOnlyFilter(null);
        }
        RulesApiMount rulesApi = RulesApiMount.of(environment);
        return new LoopbackOnlyFilter(OperatorRequests.endpointPatterns(endpoints,
                rulesApi != null ? rulesApi.patternsWithUsage() : new String[0]));
    }
}

package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.rules.RulesApiMount;
import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.autoconfigure.security.OperatorEndpointExposure;
import dev.ratelimiter.autoconfigure.security.OperatorSecurityFilter;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.web.server.WebFilter;

/**
 * The filter that authenticates the actuator endpoints, in the context that serves them: with a management port of
 * its own, its child context (where it guards the whole port and costs the gateway's traffic nothing); without one,
 * the application's context, where it guards only the endpoints' paths (and the rules API's, when it is served there).
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnClass(name = RateLimitOperatorSecurityAutoConfiguration.SPRING_SECURITY)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Conditional(OnOperatorSecurityCondition.class)
public class OperatorSecurityManagementContextConfiguration {

    /** Before any other web filter, Spring Security's own chains (order -100) included. */
    static final int ORDER = -101;

    @Bean
    @Order(ORDER)
    WebFilter rateLimitOperatorSecurityFilter(OperatorAccounts accounts, PathMappedEndpoints endpoints,
            OperatorSecurityProperties properties, Environment environment) {
        RulesApiMount rulesApi = RulesApiMount.of(environment);
        return OperatorSecurityFilter.of(accounts, endpoints, properties,
                OperatorEndpointExposure.of(environment).separatePort(),
                rulesApi != null ? rulesApi.path() : null);
    }
}

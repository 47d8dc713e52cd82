package dev.ratelimiter.autoconfigure.mvc;

import java.util.Optional;

import dev.ratelimiter.autoconfigure.AbuseScoreApi;
import dev.ratelimiter.autoconfigure.OnRulesApiCondition;
import dev.ratelimiter.autoconfigure.actuate.OperatorJsonRuntimeHints;
import dev.ratelimiter.autoconfigure.rules.AbuseScoreOperations;
import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.autoconfigure.rules.RulesApiRuntimeHints;
import dev.ratelimiter.autoconfigure.rules.WhatIfOperations;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The REST rules API on the servlet flavour, where the WebFlux flavour serves it: a management port's own context,
 * or, only when {@code ratelimit.rules-api.enabled=true} asks for it, the application's under the actuator's base
 * path. The operator chain ({@link OperatorSecurityServletFilter}) authenticates it wherever it leaves loopback;
 * with that chain switched off, {@link UnauthenticatedOperatorEndpoints} refuses to start where more than this host
 * could reach it.
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnClass(RouterFunction.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@Conditional(OnRulesApiCondition.class)
@ImportRuntimeHints({ RulesApiRuntimeHints.class, OperatorJsonRuntimeHints.class })
public class RulesApiMvcManagementContextConfiguration {

    /**
     * Without the rule admin (the rule store switched off) the routes match nothing: there is nothing to change.
     * First of all router functions, as on WebFlux (whose router functions come before the gateway's routes): on the
     * shared port a gateway route on {@code /actuator/**} must not take the API's paths.
     */
    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    @ConditionalOnMissingBean(name = "rateLimitRulesApi")
    RouterFunction<ServerResponse> rateLimitRulesApi(ApplicationContext context) {
        RulesApiOperations operations = RulesApiOperations.of(context);
        if (operations == null) {
            return request -> Optional.empty();
        }
        RouterFunction<ServerResponse> rules = RulesApiServletRoutes.whatIf(operations,
                WhatIfOperations.of(context, operations)).and(RulesApiServletRoutes.of(operations));
        AbuseScoreOperations abuse = AbuseScoreApi.of(context, operations);
        return abuse == null ? rules : AbuseScoresServletRoutes.of(abuse).and(rules);
    }
}

package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.actuate.OperatorJsonRuntimeHints;
import dev.ratelimiter.autoconfigure.rules.AbuseScoreOperations;
import dev.ratelimiter.autoconfigure.rules.AbuseScoresApiHandler;
import dev.ratelimiter.autoconfigure.rules.RulesApiAccess;
import dev.ratelimiter.autoconfigure.rules.RulesApiHandler;
import dev.ratelimiter.autoconfigure.rules.RulesApiMount;
import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.autoconfigure.rules.RulesApiRoutes;
import dev.ratelimiter.autoconfigure.rules.RulesApiRuntimeHints;
import dev.ratelimiter.autoconfigure.rules.WhatIfHandler;
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
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * The REST rules API as functional routes in the context that serves the actuator (Boot 4 has no controller
 * endpoints): a management port's own context, or, only when asked for, the application's under the actuator's base
 * path ({@link RulesApiMount}). Authenticated by the operator filter in the same context, roles checked again by
 * each handler ({@link RulesApiAccess}).
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnClass({ RouterFunction.class, JsonMapper.class })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@Conditional(OnRulesApiCondition.class)
@ImportRuntimeHints({ RulesApiRuntimeHints.class, OperatorJsonRuntimeHints.class })
public class RulesApiManagementContextConfiguration {

    /**
     * Without the rule admin (the rule store switched off, {@code ratelimit.rule-store.enabled=false}) the routes
     * match nothing: there are no runtime rules to change.
     */
    @Bean
    @ConditionalOnMissingBean(name = "rateLimitRulesApi")
    RouterFunction<ServerResponse> rateLimitRulesApi(ApplicationContext context) {
        RulesApiOperations operations = RulesApiOperations.of(context);
        if (operations == null) {
            return request -> Mono.empty();
        }
        RouterFunction<ServerResponse> rules = WhatIfHandler.routes(operations.mount(),
                new WhatIfHandler(WhatIfOperations.of(context, operations)))
                .and(RulesApiRoutes.of(operations.mount(), new RulesApiHandler(operations)));
        AbuseScoreOperations abuse = AbuseScoreApi.of(context, operations);
        return abuse == null ? rules : new AbuseScoresApiHandler(abuse).routes().and(rules);
    }
}

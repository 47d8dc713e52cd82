package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.rules.RulesApiAccess;
import dev.ratelimiter.autoconfigure.rules.RulesApiMount;
import dev.ratelimiter.autoconfigure.usage.UsageApiHandler;
import dev.ratelimiter.autoconfigure.usage.UsageOperations;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * The usage API ({@code GET /v1/usage}) beside the rules API, wherever that is served ({@link RulesApiMount#usagePath()}):
 * the same port, the same operator filter in front (reads for the viewer and the admin), the same roles checked
 * again by the handler ({@link RulesApiAccess}). Served also when the rule store is off: usage does not depend on it.
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnClass({ RouterFunction.class, JsonMapper.class })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@Conditional(OnRulesApiCondition.class)
public class UsageApiManagementContextConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "rateLimitUsageApi")
    RouterFunction<ServerResponse> rateLimitUsageApi(ApplicationContext context) {
        UsageOperations operations = UsageOperations.of(context);
        RulesApiMount mount = RulesApiMount.of(context.getEnvironment());
        return operations == null || mount == null ? request -> Mono.empty()
                : new UsageApiHandler(operations).routes(mount.usagePath());
    }
}

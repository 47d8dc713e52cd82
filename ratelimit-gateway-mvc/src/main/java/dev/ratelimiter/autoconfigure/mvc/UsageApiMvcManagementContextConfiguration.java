package dev.ratelimiter.autoconfigure.mvc;

import java.security.Principal;
import java.time.Duration;
import java.util.Optional;

import dev.ratelimiter.autoconfigure.OnRulesApiCondition;
import dev.ratelimiter.autoconfigure.rules.RulesApiMount;
import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import dev.ratelimiter.autoconfigure.usage.UsageOperations;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;
import tools.jackson.databind.json.JsonMapper;

/**
 * The usage API ({@code GET /v1/usage}) on the servlet flavour, beside the rules API wherever that is served, as on
 * WebFlux ({@link RulesApiMount#usagePath()}); the operator chain guards it as it guards the rules API's reads. The
 * reading is waited for on the servlet thread, at most the store's longest wait (the reader's own bound) and a margin.
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnClass({ RouterFunction.class, JsonMapper.class })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@Conditional(OnRulesApiCondition.class)
public class UsageApiMvcManagementContextConfiguration {

    /** Beyond the reader's own bound, which answers first: only a reader that never answers meets this. */
    static final Duration BACKSTOP = Duration.ofSeconds(10);

    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    @ConditionalOnMissingBean(name = "rateLimitUsageApi")
    RouterFunction<ServerResponse> rateLimitUsageApi(ApplicationContext context) {
        UsageOperations operations = UsageOperations.of(context);
        RulesApiMount mount = RulesApiMount.of(context.getEnvironment());
        if (operations == null || mount == null) {
            return request -> Optional.empty();
        }
        String path = mount.usagePath();
        return RouterFunctions.route()
                .GET(path, request -> read(operations, request)).HEAD(path, request -> read(operations, request))
                .route(RequestPredicates.path(path),
                        request -> RulesApiServletRoutes.write(UsageOperations.onlyReads(instance(request))))
                .build();
    }

    private static ServerResponse read(UsageOperations operations, ServerRequest request) {
        Principal caller = request.principal().orElse(RulesApiOperations.anonymous());
        RulesApiOperations.Answer answer = operations.read(caller, request.params(), instance(request))
                .block(BACKSTOP);
        return RulesApiServletRoutes.write(answer);
    }

    private static String instance(ServerRequest request) {
        return request.requestPath().pathWithinApplication().value();
    }
}

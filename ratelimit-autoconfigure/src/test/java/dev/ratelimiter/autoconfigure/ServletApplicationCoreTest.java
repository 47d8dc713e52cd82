package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.actuate.RateLimitControlEndpoint;
import dev.ratelimiter.autoconfigure.actuate.RateLimitHealthIndicator;
import dev.ratelimiter.autoconfigure.actuate.RateLimitRulesEndpoint;
import dev.ratelimiter.core.FailSafeStore;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RuleSync;
import dev.ratelimiter.core.StoreStack;
import dev.ratelimiter.gateway.RequestIdentityResolver;
import dev.ratelimiter.gateway.webflux.LoadSheddingFilter;
import dev.ratelimiter.gateway.webflux.RateLimitFilter;
import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The core auto-configurations assume no web stack: in a servlet application (the Gateway Server MVC flavour) the
 * rules, the evaluator, the store stack, the rule sync and the operator endpoints are all there, and only the
 * WebFlux gateway's filters back off.
 */
class ServletApplicationCoreTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                    DataRedisReactiveAutoConfiguration.class, RateLimitRedisClientAutoConfiguration.class,
                    RateLimitRedisAutoConfiguration.class, RateLimitRegionsAutoConfiguration.class,
                    RateLimitAutoConfiguration.class, RateLimitEventsAutoConfiguration.class,
                    EndpointAutoConfiguration.class, RateLimitActuatorAutoConfiguration.class,
                    RateLimitIdentityAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class,
                    RateLimitSheddingAutoConfiguration.class, RateLimitOperatorSecurityAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.url=" + redis.url(), "management.endpoints.web.exposure.include=*");

    @Test
    void inAServletApplicationTheCoreIsThereOnRedis() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(RateLimitStore.class).find(FailSafeStore.class)).isPresent();
            assertThat(context).hasSingleBean(RateLimitEvaluator.class).hasSingleBean(StoreStack.class)
                    .hasSingleBean(RuleSync.class).hasSingleBean(RateLimitRulesEndpoint.class)
                    .hasSingleBean(RateLimitControlEndpoint.class).hasSingleBean(RateLimitHealthIndicator.class);
            assertThat(context.getBean(RuleSync.class).status().lastSync()).as("rules read").isNotNull();
        });
    }

    @Test
    void inAServletApplicationTheWebFluxFiltersBackOff() {
        runner.run(context -> assertThat(context).doesNotHaveBean(RateLimitFilter.class)
                .doesNotHaveBean(LoadSheddingFilter.class).doesNotHaveBean(RequestIdentityResolver.class));
    }
}

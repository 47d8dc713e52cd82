package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.autoconfigure.actuate.RateLimitControlEndpoint;
import dev.ratelimiter.autoconfigure.actuate.RateLimitRulesEndpoint;
import dev.ratelimiter.autoconfigure.security.RateLimitSecretsSanitizer;
import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.StoreMetrics;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.VerdictListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/** The operator's endpoints, health component and meters: present by default, each replaceable or switched off. */
class RateLimitActuatorAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitActuatorAutoConfiguration.class,
                    RateLimitAutoConfiguration.class))
            .withPropertyValues("management.endpoints.web.exposure.include=ratelimit,ratelimitcontrol,health");

    @Test
    void theEndpointsTheHealthComponentAndTheSanitizerAreThereByDefault() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(RateLimitRulesEndpoint.class)
                    .hasSingleBean(RateLimitControlEndpoint.class).hasBean("rateLimitHealthIndicator")
                    .hasBean("rateLimitSecretsSanitizer").hasSingleBean(SanitizingFunction.class);
            Health health = context.getBean("rateLimitHealthIndicator", HealthIndicator.class).health();
            assertThat(health.getStatus().getCode()).isEqualTo("UP");
            assertThat(health.getDetails()).containsEntry("store", "memory").containsKey("rulesVersion");
            assertThat(context).as("no registry, no meters").doesNotHaveBean(StoreMetrics.class);
        });
    }

    @Test
    void withARegistryTheStoreAndTheVerdictsAreMetered() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            assertThat(context).hasSingleBean(StoreMetrics.class).hasBean("micrometerVerdictListener")
                    .hasBean("rateLimitRuleMetrics");
            assertThat(context.getBean("micrometerVerdictListener")).isInstanceOf(VerdictListener.class);
        });
    }

    @Test
    void theRuleTagFollowsItsSettingsAndTheRulesInForce() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("ratelimit.rules.per-route.capacity=5", "ratelimit.rules.per-route.refill-tokens=1",
                        "ratelimit.rules.per-route.group=caps", "ratelimit.metrics.rule-tag.configured-rules=group",
                        "ratelimit.metrics.rule-tag.runtime-rules=id", "ratelimit.metrics.rule-tag.keep-ids=kept")
                .run(context -> {
                    RuleAdmin admin = context.getBean(RuleAdmin.class);
                    assertThat(admin.put("posted", Map.of("capacity", 5, "refill-tokens", 1, "key", "route"))
                            .isApplied()).isTrue();
                    VerdictListener listener = context.getBean("micrometerVerdictListener", VerdictListener.class);
                    RuleSet rules = context.getBean(RuleSetHolder.class).get();
                    listener.onVerdict(REQUEST, denied(rules.rules().get("per-route")));
                    listener.onVerdict(REQUEST, denied(rules.rules().get("posted")));
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    assertThat(meters.find("ratelimit.decisions").meters()).extracting(m -> m.getId().getTag("rule"))
                            .containsExactlyInAnyOrder("caps", "posted");

                    assertThat(admin.delete("posted").isApplied()).isTrue();
                    assertThat(meters.find("ratelimit.decisions").meters()).extracting(m -> m.getId().getTag("rule"))
                            .containsExactly("caps");
                });
    }

    private static final RequestAttributes REQUEST = new RequestAttributes(null, null, null, null, "r", "/", "default",
            "default", 1);

    private static Verdict denied(Rule rule) {
        return Verdict.evaluated(List.of(new RuleOutcome(new Check(rule, new BucketKey("p", rule.id()), 1, false),
                false, 0, Duration.ZERO, Duration.ZERO)), Verdict.Source.STORE);
    }

    @Test
    void endpointsNotExposedAreNotMade() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitActuatorAutoConfiguration.class,
                RateLimitAutoConfiguration.class)).withPropertyValues("management.endpoints.web.exposure.include=health")
                .run(context -> assertThat(context).doesNotHaveBean(RateLimitRulesEndpoint.class)
                        .doesNotHaveBean(RateLimitControlEndpoint.class).hasBean("rateLimitHealthIndicator"));
    }

    @Test
    void theHealthComponentCanBeSwitchedOff() {
        runner.withPropertyValues("management.health.ratelimit.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("rateLimitHealthIndicator"));
    }

    @Test
    void userBeansReplaceOurs() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).withUserConfiguration(OwnBeans.class)
                .run(context -> {
                    assertThat(context.getBean("rateLimitHealthIndicator")).isSameAs(
                            context.getBean(OwnBeans.class).health);
                    assertThat(context.getBean(StoreMetrics.class)).isSameAs(StoreMetrics.NONE);
                });
    }

    @Test
    void withoutTheActuatorOrWithTheLimiterOffNothingIsMade() {
        runner.withClassLoader(new FilteredClassLoader(Endpoint.class)).run(context -> assertThat(context)
                .doesNotHaveBean(RateLimitRulesEndpoint.class).doesNotHaveBean("rateLimitHealthIndicator"));
        runner.withPropertyValues("ratelimit.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(RateLimitRulesEndpoint.class).doesNotHaveBean("rateLimitHealthIndicator"));
    }

    @Test
    void secretsAreMaskedWhereverConfigurationIsShown() {
        assertThat(RateLimitSecretsSanitizer.isRateLimitSecret("ratelimit.management.security.admin.password"))
                .isTrue();
        assertThat(RateLimitSecretsSanitizer.isRateLimitSecret("RATELIMIT_CLIENTID_SECRET")).isTrue();
        assertThat(RateLimitSecretsSanitizer.isRateLimitSecret("ratelimit.tiers.pro.api-keys[0]")).isTrue();
        assertThat(RateLimitSecretsSanitizer.isRateLimitSecret("ratelimit.api-key.unknown.policy"))
                .isFalse();
        assertThat(RateLimitSecretsSanitizer.isRateLimitSecret("ratelimit.store.timeout")).isFalse();
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBeans {

        final HealthIndicator health = () -> Health.up().build();

        @Bean
        HealthIndicator rateLimitHealthIndicator() {
            return health;
        }

        @Bean
        StoreMetrics ownStoreMetrics() {
            return StoreMetrics.NONE;
        }
    }
}

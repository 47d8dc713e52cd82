package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.rules.PropertyRuleDefinitions;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.TokenBucketLimit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

    @Test
    void withoutLimitsEverythingStartsAndOnlyKeysNobodyListedAreLimited() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(RateLimitEvaluator.class);
            assertThat(context).getBean(RateLimitStore.class).isInstanceOf(LocalBucketStore.class);
            // the default unknown-key policy's bucket per address, and nothing else
            assertThat(context.getBean(RuleSetHolder.class).get().rules()).containsOnlyKeys(RuleSet.UNKNOWN_KEYS);
        });
    }

    @Test
    void limitsFromPropertiesBecomeThePlan() {
        runner.withPropertyValues("ratelimit.default-tier=free",
                "ratelimit.tiers.free.limits.default.capacity=10",
                "ratelimit.tiers.free.limits.default.refill-tokens=5",
                "ratelimit.tiers.pro.api-keys=acme,globex",
                "ratelimit.tiers.pro.limits.default.capacity=1000",
                "ratelimit.tiers.pro.limits.default.refill-tokens=1000",
                "ratelimit.tiers.pro.limits.default.refill-period=1m")
                .run(context -> {
                    RuleSet rules = context.getBean(RuleSetHolder.class).get();
                    assertThat(rules.tierOf("globex")).isEqualTo("pro");
                    assertThat(rules.tierOf("nobody")).isEqualTo("free");
                    assertThat(rules.rules().get("pro.default").limit()).isInstanceOfSatisfying(TokenBucketLimit.class,
                            limit -> {
                                assertThat(limit.capacity()).isEqualTo(1000);
                                assertThat(limit.tokensPerSecond()).isCloseTo(16.667,
                                        org.assertj.core.data.Offset.offset(0.001));
                            });
                });
    }

    @Test
    void aTierLimitTakesStoreModeAndFailureModeLikeARule() {
        runner.withPropertyValues("ratelimit.default-tier=free", "ratelimit.tiers.free.limits.default.capacity=10",
                "ratelimit.tiers.free.limits.default.refill-tokens=5",
                "ratelimit.tiers.free.limits.default.store-mode=local",
                "ratelimit.tiers.free.limits.default.failure-mode=closed").run(context -> {
                    dev.ratelimiter.core.Rule rule = context.getBean(RuleSetHolder.class).get().rules()
                            .get("free.default");
                    assertThat(rule.storeMode()).isEqualTo(dev.ratelimiter.core.StoreMode.LOCAL);
                    assertThat(rule.failureMode()).isEqualTo(dev.ratelimiter.core.FailureMode.CLOSED);
                });
        runner.withPropertyValues("ratelimit.default-tier=free", "ratelimit.tiers.free.limits.default.limit=10",
                "ratelimit.tiers.free.limits.default.algorithm=sliding-window",
                "ratelimit.tiers.free.limits.default.window=1m",
                "ratelimit.tiers.free.limits.default.store-mode=local").run(context -> assertThat(context)
                        .hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("ratelimit.tiers.free.limits.default has store-mode local"));
    }

    @Test
    void aRuleSwitchedOffIsValidatedButNotInForce() {
        String[] hourly = {"ratelimit.default-tier=free", "ratelimit.tiers.free.limits.default.capacity=10",
                "ratelimit.tiers.free.limits.default.refill-tokens=5", "ratelimit.rules.hourly.algorithm=sliding-window",
                "ratelimit.rules.hourly.limit=1000", "ratelimit.rules.hourly.window=1h"};
        runner.withPropertyValues(hourly).run(context -> assertThat(context.getBean(RuleSetHolder.class).get()
                .rules()).containsOnlyKeys("free.default", "hourly", RuleSet.UNKNOWN_KEYS));
        runner.withPropertyValues(hourly).withPropertyValues("ratelimit.rules.hourly.enabled=false")
                .run(context -> assertThat(context.getBean(RuleSetHolder.class).get().rules())
                        .containsOnlyKeys("free.default", RuleSet.UNKNOWN_KEYS));
        runner.withPropertyValues(hourly).withPropertyValues("ratelimit.rules.hourly.enabled=false",
                "ratelimit.rules.hourly.limit=0").run(context -> assertThat(context).hasFailed()
                        .getFailure().rootCause().hasMessageContaining("ratelimit.rules.hourly.limit"));
    }

    @Test
    void aRuntimeRuleOfJustEnabledFalseSwitchesARuleOrTierDefaultOff() {
        runner.withPropertyValues("ratelimit.default-tier=free", "ratelimit.tiers.free.limits.default.capacity=10",
                "ratelimit.tiers.free.limits.default.refill-tokens=5", "ratelimit.rules.login.capacity=3",
                "ratelimit.rules.login.refill-tokens=1").run(context -> {
                    RuleSetFactory factory = new RuleSetFactory(
                            new PropertyRuleDefinitions(context.getBean(RateLimitProperties.class)));
                    RuleSet off = factory.create(new dev.ratelimiter.core.RuntimeRules(2, java.util.Map.of(
                            "login", java.util.Map.of("enabled", "false"),
                            "free.default", java.util.Map.of("enabled", "false")), java.util.Map.of()));
                    assertThat(off.rules()).containsOnlyKeys(RuleSet.UNKNOWN_KEYS);
                    assertThat(factory.create(dev.ratelimiter.core.RuntimeRules.EMPTY).rules())
                            .containsOnlyKeys("free.default", "login", RuleSet.UNKNOWN_KEYS);
                });
    }

    @Test
    void aUserStoreMakesOursBackOff() {
        runner.withUserConfiguration(UserStore.class).run(context -> {
            assertThat(context).hasSingleBean(RateLimitStore.class);
            assertThat(context.getBean(RateLimitStore.class)).isSameAs(context.getBean("myStore"));
        });
    }

    @Test
    void switchedOffThereIsNoLimiter() {
        runner.withPropertyValues("ratelimit.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(RateLimitEvaluator.class);
            assertThat(context).doesNotHaveBean(RateLimitStore.class);
        });
    }

    @Test
    void aBadLimitFailsStartupWithASentenceNamingTheSetting() {
        runner.withPropertyValues("ratelimit.default-tier=free", "ratelimit.tiers.free.limits.default.capacity=0",
                "ratelimit.tiers.free.limits.default.refill-tokens=5").run(context -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis = new InvalidLimitFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).isEqualTo("The rate limit configuration is invalid: "
                            + "ratelimit.tiers.free.limits.default.capacity must be at least 1 (the largest burst a "
                            + "client may send), but was 0.");
                    assertThat(analysis.getAction()).startsWith("Correct ratelimit.tiers.free.limits.default.capacity");
                });
    }

    @Test
    void anUnknownDefaultTierFailsStartup() {
        runner.withPropertyValues("ratelimit.default-tier=gold", "ratelimit.tiers.free.limits.default.capacity=1",
                "ratelimit.tiers.free.limits.default.refill-tokens=1").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLimitException.class)
                            .hasMessageContaining("ratelimit.default-tier is 'gold'")
                            .hasMessageContaining("[free]");
                });
    }

    @Test
    void theBucketOfUnknownKeysMustLimitARateNotRequestsInProgress() {
        runner.withPropertyValues("ratelimit.default-tier=free", "ratelimit.tiers.free.limits.default.capacity=1",
                "ratelimit.tiers.free.limits.default.refill-tokens=1",
                "ratelimit.api-key.unknown.limit.algorithm=concurrency",
                "ratelimit.api-key.unknown.limit.max-in-progress=2").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLimitException.class)
                            .hasMessageContaining("The bucket of unknown API keys limits a rate");
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class UserStore {

        @Bean
        RateLimitStore myStore() {
            return checks -> Mono.empty();
        }
    }
}

package dev.ratelimiter.autoconfigure;

import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.core.ForwardingRuleStore;
import dev.ratelimiter.core.InMemoryRuleStore;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.RuleStore;
import dev.ratelimiter.core.RuntimeRules;
import org.junit.jupiter.api.Test;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rule sync must put the rule store's switches in force when the application starts, however the application
 * creates its beans. Before issue 17 the sync was a SmartLifecycle, which the context starts even when every bean is
 * lazy ({@code spring.main.lazy-initialization=true}); as an init method it runs only if something asks for the bean.
 */
class RuleSyncStartsWithTheContextTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
            .withUserConfiguration(StoreWithKillSwitch.class);

    @Test
    void theStoredKillSwitchIsInForceOnceTheContextHasStarted() {
        runner.run(context -> assertThat(context.getBean(RuleSetHolder.class).get().killSwitch())
                .as("kill switch from the rule store, eager beans").isTrue());
    }

    @Test
    void theStoredKillSwitchIsInForceOnceALazyContextHasStarted() {
        // What spring.main.lazy-initialization=true installs.
        runner.withInitializer(context -> context.addBeanFactoryPostProcessor(
                new LazyInitializationBeanFactoryPostProcessor()))
                .run(context -> assertThat(context.getBean(RuleSetHolder.class).get().killSwitch())
                        .as("kill switch from the rule store, lazy beans (the gateway's filter needs only the "
                                + "holder, so nothing asks for the rule sync)").isTrue());
    }

    @Test
    void aStoppedContextStopsReadingTheRuleStore() {
        runner.withPropertyValues("ratelimit.rule-store.poll-interval=50ms").run(context -> {
            StoreWithKillSwitch.LOADS.set(0);
            Thread.sleep(300);
            assertThat(StoreWithKillSwitch.LOADS.get()).as("polls while running").isPositive();
            context.stop();
            Thread.sleep(100);
            StoreWithKillSwitch.LOADS.set(0);
            Thread.sleep(500);
            assertThat(StoreWithKillSwitch.LOADS.get()).as("rule store reads while the context is stopped").isZero();
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class StoreWithKillSwitch {

        static final AtomicInteger LOADS = new AtomicInteger();

        @Bean
        RuleStore ruleStore() {
            InMemoryRuleStore store = new InMemoryRuleStore();
            store.putControl(RuntimeRules.KILL_SWITCH, "true").block();
            return new ForwardingRuleStore(store) {
                @Override
                public Mono<RuntimeRules> load() {
                    LOADS.incrementAndGet();
                    return super.load();
                }
            };
        }
    }
}

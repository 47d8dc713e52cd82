package dev.ratelimiter.autoconfigure;

import java.time.Duration;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitRedisClientAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
            AutoConfigurations.of(RateLimitRedisClientAutoConfiguration.class, DataRedisAutoConfiguration.class));

    @Test
    void theRedisClientReconnectsAtLeastOnceASecondByDefault() {
        runner.run(context -> {
            Delay delay = context.getBean(ClientResources.class).reconnectDelay();
            assertThat(delay.createDelay(1)).isLessThanOrEqualTo(Duration.ofMillis(20));
            for (long attempt = 1; attempt < 40; attempt++) {
                assertThat(delay.createDelay(attempt)).isLessThanOrEqualTo(Duration.ofSeconds(1));
            }
            assertThat(delay.createDelay(20)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
        });
    }

    @Test
    void theCapIsASettingAndZeroLeavesLettucesDefault() {
        runner.withPropertyValues("ratelimit.store.reconnect-max-delay=250ms").run(context -> {
            Delay delay = context.getBean(ClientResources.class).reconnectDelay();
            assertThat(delay.createDelay(30)).isBetween(Duration.ofMillis(125), Duration.ofMillis(250));
        });
        runner.withPropertyValues("ratelimit.store.reconnect-max-delay=0").run(context -> assertThat(
                context.getBean(ClientResources.class).reconnectDelay().createDelay(20))
                .isEqualTo(Duration.ofSeconds(30)));
    }

    @Test
    void switchedOffTheLimiterLeavesTheClientAlone() {
        runner.withPropertyValues("ratelimit.enabled=false").run(context -> assertThat(
                context.getBean(ClientResources.class).reconnectDelay().createDelay(20))
                .isEqualTo(Duration.ofSeconds(30)));
    }
}

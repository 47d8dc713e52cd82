package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.InvalidLimitException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.kafka.core.KafkaTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What stops the start-up rather than serve insecurely or lose data stops it under
 * {@code spring.main.lazy-initialization=true} too (found by the issue-34 review): Kafka meant for events without
 * spring-kafka, and the operator endpoints on every address without Spring Security.
 */
class LazyInitialisationFailsClosedTest {

    @Test
    void kafkaEventsWithoutSpringKafka() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitEventsAutoConfiguration.class,
                        RateLimitAutoConfiguration.class))
                .withInitializer(context -> context.addBeanFactoryPostProcessor(
                        new LazyInitializationBeanFactoryPostProcessor()))
                .withPropertyValues("ratelimit.events.kafka.bootstrap-servers=127.0.0.1:9")
                .withClassLoader(new FilteredClassLoader(KafkaTemplate.class))
                .run(context -> assertThat(context).as("started silently; events never reach Kafka").hasFailed()
                        .getFailure().rootCause().isInstanceOf(InvalidLimitException.class));
    }

    @Test
    void operatorEndpointsOnEveryAddressWithoutSpringSecurity() {
        new ReactiveWebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitOperatorSecurityAutoConfiguration.class))
                .withInitializer(context -> context.addBeanFactoryPostProcessor(
                        new LazyInitializationBeanFactoryPostProcessor()))
                .withClassLoader(new FilteredClassLoader("org.springframework.security"))
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .isInstanceOf(InvalidLimitException.class).hasMessageContaining("Spring Security"));
    }
}

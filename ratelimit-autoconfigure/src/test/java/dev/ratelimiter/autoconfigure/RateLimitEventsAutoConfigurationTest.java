package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.DecisionEvents;
import dev.ratelimiter.core.EventQueue;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.LogEventSink;
import dev.ratelimiter.core.RecentDecisions;
import dev.ratelimiter.kafka.KafkaEventSink;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.core.KafkaTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/** Decision events wired: the queue and its sinks, Kafka only when it is configured, each part replaceable. */
class RateLimitEventsAutoConfigurationTest {

    /** Nothing listens there: a Kafka producer is made lazily, so nothing is ever sent in these tests. */
    static final String NO_BROKER = "127.0.0.1:9";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitEventsAutoConfiguration.class,
                    RateLimitAutoConfiguration.class));

    @Test
    void byDefaultDecisionsGoToTheRecentViewOnlyThroughTheQueue() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(RecentDecisions.class).hasSingleBean(EventQueue.class)
                    .hasSingleBean(DecisionEvents.class).doesNotHaveBean(KafkaEventSink.class);
            assertThat(context.getBean(EventQueue.class).sinks()).singleElement()
                    .isSameAs(context.getBean(RecentDecisions.class));
        });
    }

    @Test
    void withBootstrapServersEventsGoToKafkaTooAndTheLogWhenAsked() {
        runner.withPropertyValues("ratelimit.events.kafka.bootstrap-servers=" + NO_BROKER, "ratelimit.events.log=true")
                .run(context -> {
                    assertThat(context).hasSingleBean(KafkaEventSink.class);
                    assertThat(context.getBean(EventQueue.class).sinks()).hasSize(3)
                            .contains(context.getBean(KafkaEventSink.class))
                            .hasAtLeastOneElementOfType(LogEventSink.class);
                    assertThat(context.getBean(KafkaEventSink.class).topic()).isEqualTo("ratelimit.decisions");
                });
    }

    @Test
    void springKafkasServersServeAndKafkaCanBeSwitchedOffWithThem() {
        runner.withPropertyValues("spring.kafka.bootstrap-servers=" + NO_BROKER)
                .run(context -> assertThat(context).hasSingleBean(KafkaEventSink.class));
        runner.withPropertyValues("spring.kafka.bootstrap-servers=" + NO_BROKER, "ratelimit.events.kafka.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(KafkaEventSink.class));
    }

    @Test
    void kafkaSwitchedOnWithoutServersFailsTheStartUpWithWhatToSet() {
        runner.withPropertyValues("ratelimit.events.kafka.enabled=true").run(context -> assertThat(context)
                .hasFailed().getFailure().rootCause().hasMessageContaining("set ratelimit.events.kafka.bootstrap-servers"));
    }

    @Test
    void withoutSpringKafkaEventsMeantForKafkaStopTheStartUpWithWhatToAddOrHowToStayInMemory() {
        for (String servers : new String[] { "ratelimit.events.kafka.bootstrap-servers=" + NO_BROKER,
                "spring.kafka.bootstrap-servers=" + NO_BROKER, "ratelimit.events.kafka.enabled=true" }) {
            String setting = servers.startsWith("spring") ? "spring.kafka.bootstrap-servers"
                    : "ratelimit.events.kafka.bootstrap-servers";
            runner.withPropertyValues(servers).withClassLoader(new FilteredClassLoader(KafkaTemplate.class))
                    .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                            .isInstanceOf(InvalidLimitException.class)
                            .hasMessageContaining("Decision events are to go through Kafka (" + setting + ")")
                            .hasMessageContaining("Add org.springframework.kafka:spring-kafka")
                            .hasMessageContaining("ratelimit.events.kafka.enabled=false"));
        }
        runner.withPropertyValues("spring.kafka.bootstrap-servers=" + NO_BROKER, "ratelimit.events.kafka.enabled=false")
                .withClassLoader(new FilteredClassLoader(KafkaTemplate.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(KafkaEventSink.class)
                        .hasSingleBean(EventQueue.class));
    }

    @Test
    void switchedOffNoEventBeanExists() {
        runner.withPropertyValues("ratelimit.events.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(EventQueue.class).doesNotHaveBean(RecentDecisions.class)
                .doesNotHaveBean(DecisionEvents.class));
        runner.withPropertyValues("ratelimit.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(EventQueue.class));
    }

    @Test
    void aUserBeanReplacesOurs() {
        runner.withUserConfiguration(OwnRecentDecisions.class).run(context -> {
            assertThat(context.getBean(RecentDecisions.class)).isSameAs(context.getBean(OwnRecentDecisions.class)
                    .recent);
            assertThat(context.getBean(EventQueue.class).sinks()).containsExactly(context.getBean(
                    OwnRecentDecisions.class).recent);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnRecentDecisions {

        final RecentDecisions recent = new RecentDecisions(5, 10);

        @Bean
        RecentDecisions ownRecentDecisions() {
            return recent;
        }
    }
}

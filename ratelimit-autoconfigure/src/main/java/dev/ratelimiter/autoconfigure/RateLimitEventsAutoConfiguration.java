package dev.ratelimiter.autoconfigure;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimiter.autoconfigure.metrics.DecisionEventMeters;
import dev.ratelimiter.autoconfigure.store.InstanceName;
import dev.ratelimiter.core.AbuseScores;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.DecisionEvents;
import dev.ratelimiter.core.EventQueue;
import dev.ratelimiter.core.EventSink;
import dev.ratelimiter.core.LogEventSink;
import dev.ratelimiter.core.RecentDecisions;
import dev.ratelimiter.kafka.KafkaEventSink;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.Environment;
import org.springframework.kafka.core.KafkaTemplate;

/**
 * Decision events: a bounded queue fed by every verdict and shed request, drained on its own thread to the recent
 * decisions kept for the actuator view, to Kafka when a broker is configured, and to a log when asked.
 */
@AutoConfiguration(before = RateLimitGatewayAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = { "ratelimit.enabled", "ratelimit.events.enabled" }, matchIfMissing = true)
@EnableConfigurationProperties(DecisionEventProperties.class)
public final class RateLimitEventsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RecentDecisions rateLimitRecentDecisions(DecisionEventProperties properties) {
        return new RecentDecisions(properties.getRecent(), 1_000);
    }

    /** Stopped after the beans that feed it (the filters), so the last requests' events still reach the sinks. */
    @Bean(initMethod = "start", destroyMethod = "stop")
    @ConditionalOnMissingBean
    EventQueue rateLimitEventQueue(DecisionEventProperties properties, RecentDecisions recent,
            ObjectProvider<EventSink> sinks, ObjectProvider<MeterRegistry> registries) {
        List<EventSink> all = new ArrayList<>();
        all.add(recent);
        sinks.orderedStream().filter(sink -> sink != recent).forEach(all::add);
        if (properties.isLog()) {
            all.add(new LogEventSink());
        }
        EventQueue queue = new EventQueue(properties.getQueueCapacity(), all);
        registries.ifAvailable(registry -> DecisionEventMeters.bind(queue, registry));
        return queue;
    }

    @Bean
    @ConditionalOnMissingBean
    DecisionEvents rateLimitDecisionEvents(EventQueue queue, DecisionEventProperties properties,
            ClientIdKeyring clientIds, ObjectProvider<AbuseScores> abuse) {
        return new DecisionEvents(queue, Clock.systemUTC(), InstanceName.configuredOr(properties.getInstance()),
                properties.getRegion(), clientIds.current(), abuse.getIfAvailable());
    }

    /** Events meant for Kafka without spring-kafka: refused, not dropped (at start-up, lazy initialisation or not). */
    @Configuration(proxyBeanMethods = false)
    @Lazy(false)
    @ConditionalOnMissingClass("org.springframework.kafka.core.KafkaTemplate")
    @Conditional(OnKafkaEventsCondition.class)
    static class KafkaEventsWithoutSpringKafka {

        KafkaEventsWithoutSpringKafka(Environment environment) {
            KafkaBootstrapServers.refuseWithoutClient(environment, KafkaBootstrapServers.EVENTS, "Decision events",
                    "set ratelimit.events.kafka.enabled=false to keep them in memory");
        }
    }

    /** The Kafka sink, when spring-kafka is present and bootstrap servers are known. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(KafkaTemplate.class)
    @Conditional(OnKafkaEventsCondition.class)
    static class KafkaEvents {

        @Bean(destroyMethod = "")
        @ConditionalOnMissingBean
        KafkaEventSink rateLimitKafkaEventSink(DecisionEventProperties properties, Environment environment) {
            DecisionEventProperties.Kafka kafka = properties.getKafka();
            return KafkaEventSink.to(KafkaBootstrapServers.requiredForEvents(environment), kafka.getTopic(),
                    kafka.getBackOff(), kafka.getProducer());
        }
    }
}

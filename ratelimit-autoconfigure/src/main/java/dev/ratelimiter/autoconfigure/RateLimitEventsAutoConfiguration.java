package dev.ratelimiter.autoconfigure;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.DecisionEvents;
import dev.ratelimiter.core.EventQueue;
import dev.ratelimiter.core.EventSink;
import dev.ratelimiter.core.LogEventSink;
import dev.ratelimiter.core.RecentDecisions;
import dev.ratelimiter.kafka.KafkaEventSink;
import dev.ratelimiter.kafka.TelemetryProducerConfig;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
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
        registries.ifAvailable(registry -> bind(queue, registry));
        return queue;
    }

    @Bean
    @ConditionalOnMissingBean
    DecisionEvents rateLimitDecisionEvents(EventQueue queue, DecisionEventProperties properties,
            ClientIdKeyring clientIds) {
        String instance = properties.getInstance() != null ? properties.getInstance() : defaultInstance();
        return new DecisionEvents(queue, Clock.systemUTC(), instance, properties.getRegion(), clientIds.current());
    }

    private static void bind(EventQueue queue, MeterRegistry registry) {
        FunctionCounter.builder("ratelimit.events", queue, EventQueue::queued).tag("result", "queued")
                .description("Decision events queued for the sinks").register(registry);
        FunctionCounter.builder("ratelimit.events", queue, EventQueue::dropped).tag("result", "dropped")
                .description("Decision events dropped because the queue was full").register(registry);
        FunctionCounter.builder("ratelimit.events", queue,
                q -> q.sinks().stream().mapToLong(EventSink::failed).sum()).tag("result", "failed")
                .description("Decision events a sink could not deliver (Kafka down or slow)").register(registry);
        Gauge.builder("ratelimit.events.backlog", queue, EventQueue::backlog)
                .description("Decision events waiting in the queue").register(registry);
        queue.sinks().stream().filter(sink -> sink.delivered() >= 0)
                .forEach(sink -> FunctionCounter.builder("ratelimit.events", sink, EventSink::delivered)
                        .tag("result", "sent").description("Decision events Kafka acknowledged").register(registry));
    }

    static String defaultInstance() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        }
        catch (UnknownHostException ex) {
            host = "unknown-host";
        }
        return host + ":" + ManagementFactory.getRuntimeMXBean().getPid();
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
            String servers = OnKafkaEventsCondition.bootstrapServers(environment);
            if (servers == null) {
                throw new IllegalStateException("ratelimit.events.kafka.enabled is true, but no Kafka bootstrap servers "
                        + "are configured: set ratelimit.events.kafka.bootstrap-servers or "
                        + "spring.kafka.bootstrap-servers.");
            }
            Map<String, Object> config = TelemetryProducerConfig.of(servers, "ratelimit-events", 20, 30_000,
                    kafka.getProducer());
            DefaultKafkaProducerFactory<String, String> producers = new DefaultKafkaProducerFactory<>(config);
            producers.setPhysicalCloseTimeout(2);
            return new KafkaEventSink(producers, kafka.getTopic(), kafka.getBackOff(), System::nanoTime);
        }
    }
}

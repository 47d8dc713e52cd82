package dev.ratelimiter.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Events go to Kafka when {@code ratelimit.events.kafka.enabled} says so, or, left unset, when bootstrap servers
 * are known: {@code ratelimit.events.kafka.bootstrap-servers}, else {@code spring.kafka.bootstrap-servers}.
 */
final class OnKafkaEventsCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        Environment environment = context.getEnvironment();
        String enabled = environment.getProperty("ratelimit.events.kafka.enabled");
        String servers = KafkaBootstrapServers.forEvents(environment);
        if ("false".equalsIgnoreCase(enabled)) {
            return ConditionOutcome.noMatch("ratelimit.events.kafka.enabled is false");
        }
        if ("true".equalsIgnoreCase(enabled)) {
            return ConditionOutcome.match("ratelimit.events.kafka.enabled is true");
        }
        if (servers == null) {
            return ConditionOutcome.noMatch("no Kafka bootstrap servers configured for decision events");
        }
        return ConditionOutcome.match("decision events go to Kafka at " + servers);
    }
}

package dev.ratelimiter.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Abuse scores come through Kafka when bootstrap servers are known: ratelimit.abuse.kafka's, else spring.kafka's. */
final class OnAbuseKafkaCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        String servers = KafkaBootstrapServers.forAbuse(context.getEnvironment());
        return servers == null ? ConditionOutcome.noMatch("no Kafka bootstrap servers for abuse scores")
                : ConditionOutcome.match("abuse scores through Kafka at " + servers);
    }
}

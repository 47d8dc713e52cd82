package dev.ratelimiter.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Region shares go through Kafka when bootstrap servers are known: ratelimit.regions.kafka's, else spring.kafka's. */
final class OnRegionKafkaCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        String servers = KafkaBootstrapServers.forRegions(context.getEnvironment());
        return servers == null ? ConditionOutcome.noMatch("no Kafka bootstrap servers for region shares")
                : ConditionOutcome.match("region shares through Kafka at " + servers);
    }
}

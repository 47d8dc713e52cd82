package dev.ratelimiter.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches unless {@code ratelimit.store.type} is {@code memory}. */
final class OnRedisStoreCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        StoreProperties.StoreType type = Binder.get(context.getEnvironment())
                .bind("ratelimit.store.type", StoreProperties.StoreType.class)
                .orElse(StoreProperties.StoreType.AUTO);
        return type == StoreProperties.StoreType.MEMORY
                ? ConditionOutcome.noMatch("ratelimit.store.type is memory")
                : ConditionOutcome.match("ratelimit.store.type is " + type.name().toLowerCase());
    }
}

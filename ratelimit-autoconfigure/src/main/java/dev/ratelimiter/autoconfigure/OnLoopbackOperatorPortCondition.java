package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.security.LoopbackOnly;
import dev.ratelimiter.autoconfigure.security.OperatorEndpointExposure;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when the actuator endpoints are served on loopback without authentication ({@link LoopbackOnly}). */
public final class OnLoopbackOperatorPortCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        OperatorEndpointExposure exposure = OperatorEndpointExposure.of(context.getEnvironment());
        return exposure.unauthenticatedOnLoopback()
                ? ConditionOutcome.match("actuator endpoints on " + exposure.describe() + " answer loopback only")
                : ConditionOutcome.noMatch("actuator endpoints on " + exposure.describe() + " are authenticated or "
                        + "beyond loopback");
    }
}

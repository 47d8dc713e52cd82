package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.security.OperatorEndpointExposure;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when the actuator endpoints must be authenticated ({@link OperatorEndpointExposure}). */
public final class OnOperatorSecurityCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        OperatorEndpointExposure exposure = OperatorEndpointExposure.of(context.getEnvironment());
        return exposure.secured()
                ? ConditionOutcome.match("actuator endpoints on " + exposure.describe() + " are authenticated")
                : ConditionOutcome.noMatch("actuator endpoints on " + exposure.describe() + " are not authenticated");
    }
}

package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.rules.RulesApiMount;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when the rules API is served ({@link RulesApiMount}). */
public final class OnRulesApiCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        RulesApiMount mount = RulesApiMount.of(context.getEnvironment());
        return mount != null ? ConditionOutcome.match("the rules API is served at " + mount.path())
                : ConditionOutcome.noMatch("the rules API is not served (no management port of its own, and "
                        + RulesApiMount.PREFIX + ".enabled is not true; or it is false)");
    }
}

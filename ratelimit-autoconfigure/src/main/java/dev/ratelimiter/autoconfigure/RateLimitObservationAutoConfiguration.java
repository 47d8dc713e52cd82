package dev.ratelimiter.autoconfigure;

import java.util.Set;
import java.util.function.Function;

import dev.ratelimiter.autoconfigure.metrics.RuleTags;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSetFactory;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.gateway.DecisionObservationConvention;
import dev.ratelimiter.gateway.DecisionObservations;
import dev.ratelimiter.gateway.DefaultDecisionObservationConvention;
import dev.ratelimiter.gateway.StoreObservationConvention;
import dev.ratelimiter.gateway.StoreObservations;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Observes every decision ({@code ratelimit.decision}, a child of the gateway's request observation) and every call
 * to the shared store ({@code ratelimit.store}, a child of its decision) through the application's
 * {@link ObservationRegistry}. Without one, the gateways decide as before, without so much as an allocation more.
 * {@code ratelimit.observations.enabled=false} turns it off; a {@link DecisionObservationConvention} or
 * {@link StoreObservationConvention} bean changes names and keys.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnBooleanProperty(name = "ratelimit.observations.enabled", matchIfMissing = true)
@EnableConfigurationProperties(ObservationProperties.class)
public final class RateLimitObservationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    DecisionObservations rateLimitDecisionObservations(ObservationRegistry registry,
            ObjectProvider<DecisionObservationConvention> convention, ObjectProvider<ClientIdKeyring> clientIds,
            ObjectProvider<RuleSetHolder> rules, ObjectProvider<RuleSetFactory> factory) {
        return new DecisionObservations(registry, convention.getIfAvailable(),
                new DefaultDecisionObservationConvention(clientIds.getIfAvailable(ClientIdKeyring::unkeyed),
                        boundedGroups(rules.getIfAvailable(), factory.getIfAvailable())));
    }

    /**
     * The rule group as a key of few values: a meter handler makes a timer series of each, and a runtime rule posted
     * without a group (each customer override) is a group of its own. Grouped as the meters' {@code rule} tag groups
     * runtime rules: by the group of a configured rule, else {@value RuleTags#RUNTIME}.
     */
    private static Function<Rule, String> boundedGroups(RuleSetHolder rules,
            RuleSetFactory factory) {
        if (rules == null || factory == null) {
            return Rule::group;
        }
        RuleTags groups = new RuleTags(RuleTags.By.GROUP, RuleTags.By.GROUP, Set.of(), factory::isConfigured, rules);
        rules.onReplace(changed -> groups.update());
        // the rule sync may have put a set in force between the first reading and the line above
        groups.update();
        return groups::of;
    }

    @Bean
    @ConditionalOnMissingBean
    StoreObservations rateLimitStoreObservations(ObservationRegistry registry,
            ObjectProvider<StoreObservationConvention> convention) {
        return new StoreObservations(registry, convention.getIfAvailable());
    }
}

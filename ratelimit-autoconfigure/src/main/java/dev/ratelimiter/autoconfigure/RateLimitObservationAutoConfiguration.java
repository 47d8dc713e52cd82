package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.ClientIdKeyring;
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
            ObjectProvider<DecisionObservationConvention> convention, ObjectProvider<ClientIdKeyring> clientIds) {
        return new DecisionObservations(registry, convention.getIfAvailable(),
                new DefaultDecisionObservationConvention(clientIds.getIfAvailable(ClientIdKeyring::unkeyed)));
    }

    @Bean
    @ConditionalOnMissingBean
    StoreObservations rateLimitStoreObservations(ObservationRegistry registry,
            ObjectProvider<StoreObservationConvention> convention) {
        return new StoreObservations(registry, convention.getIfAvailable());
    }
}

package dev.ratelimiter.autoconfigure;

import java.time.Duration;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The circuit breaker in front of the store, taken from resilience4j's registry so that
 * {@code resilience4j.circuitbreaker.instances.<name>.*} configures it as users expect, and so that resilience4j's
 * own metrics and endpoints show it. An instance not configured there gets the limiter's defaults.
 */
final class StoreBreaker {

    /**
     * Open when half of the last 20 calls (at least 10) failed or timed out; try again after 1 s with 3 calls. A try
     * costs those 3 requests at most the store timeout each, so trying often is cheap, and it bounds how long an
     * instance stays on its fallback share after Redis is back.
     */
    static final CircuitBreakerConfig DEFAULTS = CircuitBreakerConfig.custom()
            .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
            .slidingWindowSize(20)
            .minimumNumberOfCalls(10)
            .failureRateThreshold(50)
            .waitDurationInOpenState(Duration.ofSeconds(1))
            .permittedNumberOfCallsInHalfOpenState(3)
            .build();

    private StoreBreaker() {
    }

    static CircuitBreaker of(CircuitBreakerRegistry registry, String name, Environment environment) {
        boolean configured = Binder.get(environment)
                .bind("resilience4j.circuitbreaker.instances." + name, Bindable.mapOf(String.class, Object.class))
                .isBound();
        return configured ? registry.circuitBreaker(name) : registry.circuitBreaker(name, DEFAULTS);
    }
}

package dev.ratelimiter.autoconfigure.store;

import java.time.Duration;

import dev.ratelimiter.core.StoreBreaker;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The store breaker's settings, read from resilience4j's property names so that
 * {@code resilience4j.circuitbreaker.instances.<name>.*} configures it as users of resilience4j expect:
 * {@code sliding-window-size}, {@code minimum-number-of-calls}, {@code failure-rate-threshold},
 * {@code wait-duration-in-open-state} and {@code permitted-number-of-calls-in-half-open-state}. Any of them left out
 * takes the limiter's default ({@link StoreBreaker.Settings#DEFAULTS}); other resilience4j settings do not apply (the
 * breaker is count-based, and every store error or timeout is a failure).
 */
final class StoreBreakerSettings {

    private StoreBreakerSettings() {
    }

    static StoreBreaker.Settings of(Environment environment, String name) {
        Binder binder = Binder.get(environment);
        String prefix = "resilience4j.circuitbreaker.instances." + name + ".";
        StoreBreaker.Settings defaults = StoreBreaker.Settings.DEFAULTS;
        return new StoreBreaker.Settings(
                binder.bind(prefix + "sliding-window-size", Integer.class).orElse(defaults.slidingWindowSize()),
                binder.bind(prefix + "minimum-number-of-calls", Integer.class).orElse(defaults.minimumNumberOfCalls()),
                binder.bind(prefix + "failure-rate-threshold", Float.class).orElse(defaults.failureRateThreshold()),
                binder.bind(prefix + "wait-duration-in-open-state", Duration.class)
                        .orElse(defaults.waitInOpenState()),
                binder.bind(prefix + "permitted-number-of-calls-in-half-open-state", Integer.class)
                        .orElse(defaults.callsInHalfOpenState()));
    }
}

package dev.ratelimiter.autoconfigure;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Turns Spring Data Redis's health indicator off unless the application says otherwise
 * ({@code management.health.redis.enabled=true}). Left on, a Redis outage turns {@code /actuator/health} DOWN (and
 * the check itself waits up to the Redis command timeout), and a load balancer probing it would take every gateway
 * out of service — while the gateway, deciding locally, serves every request. The limiter reports Redis in its own
 * {@code rateLimit} component instead, which stays UP and says what is degraded.
 */
public final class RateLimitHealthDefaults implements EnvironmentPostProcessor {

    static final String SOURCE = "ratelimitHealthDefaults";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (environment.getPropertySources().contains(SOURCE)) {
            return;
        }
        // Added last: any other source that sets the property wins.
        environment.getPropertySources().addLast(new MapPropertySource(SOURCE,
                Map.of("management.health.redis.enabled", "false")));
    }
}

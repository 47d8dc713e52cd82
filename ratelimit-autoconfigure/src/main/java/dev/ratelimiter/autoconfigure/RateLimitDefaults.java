package dev.ratelimiter.autoconfigure;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Defaults the limiter needs from other parts of the application, each overridden by any property source that sets
 * it (this one is added last):
 * <ul>
 * <li>{@code spring.data.redis.lettuce.cluster.refresh.adaptive=true} and {@code ...refresh.period=10s}: on Redis
 * Cluster, Lettuce learns of a failover only from a topology refresh; without one it keeps sending a dead primary's
 * slots to the dead primary, and those decisions fall back until the gateway restarts. Adaptive refresh reacts to
 * reconnect attempts and redirects within seconds; the period is the backstop. Only used when a cluster is
 * configured.</li>
 * </ul>
 * The application's own Redis health contributor is left alone: it shows in {@code /actuator/health} and turns it
 * DOWN with Redis, as the application chose. What must not follow Redis is readiness, and Spring Boot's
 * {@code readiness} group holds only the availability state, which the limiter never changes;
 * {@link dev.ratelimiter.autoconfigure.actuate.RedisHealthNotice} says so at start-up.
 */
public final class RateLimitDefaults implements EnvironmentPostProcessor {

    static final String SOURCE = "ratelimitDefaults";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (environment.getPropertySources().contains(SOURCE)) {
            return;
        }
        environment.getPropertySources().addLast(new MapPropertySource(SOURCE, Map.of(
                "spring.data.redis.lettuce.cluster.refresh.adaptive", "true",
                "spring.data.redis.lettuce.cluster.refresh.period", "10s")));
    }
}

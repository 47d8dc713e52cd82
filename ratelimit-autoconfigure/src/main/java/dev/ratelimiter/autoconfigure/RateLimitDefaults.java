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
 * <li>{@code management.health.redis.enabled=false}: left on, a Redis outage turns {@code /actuator/health} DOWN (and
 * the check itself waits up to the Redis command timeout), and a load balancer probing it would take every gateway
 * out of service — while the gateway, deciding locally, serves every request. The limiter reports Redis in its own
 * {@code rateLimit} component instead, which stays UP and says what is degraded.</li>
 * <li>{@code spring.data.redis.lettuce.cluster.refresh.adaptive=true} and {@code ...refresh.period=10s}: on Redis
 * Cluster, Lettuce learns of a failover only from a topology refresh; without one it keeps sending a dead primary's
 * slots to the dead primary, and those decisions fall back until the gateway restarts. Adaptive refresh reacts to
 * reconnect attempts and redirects within seconds; the period is the backstop. Only used when a cluster is
 * configured.</li>
 * </ul>
 */
public final class RateLimitDefaults implements EnvironmentPostProcessor {

    static final String SOURCE = "ratelimitDefaults";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (environment.getPropertySources().contains(SOURCE)) {
            return;
        }
        environment.getPropertySources().addLast(new MapPropertySource(SOURCE, Map.of(
                "management.health.redis.enabled", "false",
                "spring.data.redis.lettuce.cluster.refresh.adaptive", "true",
                "spring.data.redis.lettuce.cluster.refresh.period", "10s")));
    }
}

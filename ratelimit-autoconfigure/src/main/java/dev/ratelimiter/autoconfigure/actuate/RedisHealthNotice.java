package dev.ratelimiter.autoconfigure.actuate;

import java.util.Locale;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * One line at start-up on how Redis shows in health, where the limiter uses Redis. The application's own Redis
 * health contributor is left as the application has it, so {@code /actuator/health} goes DOWN while Redis is down;
 * a load balancer must probe readiness instead, which Spring Boot's {@code readiness} group keeps free of Redis (it
 * holds the availability state only, and the limiter never changes that state). An application whose readiness
 * group takes Redis in is told, once, what that costs.
 */
public final class RedisHealthNotice {

    static final String READINESS_INCLUDE = "management.endpoint.health.group.readiness.include";

    private static final Logger logger = LoggerFactory.getLogger(RedisHealthNotice.class);

    private RedisHealthNotice() {
    }

    /**
     * Logs the notice: INFO, or WARN when the application's readiness group includes Redis; nothing when the
     * application switched Redis health off, which leaves nothing to say.
     */
    public static void log(Environment environment) {
        if (!environment.getProperty("management.health.redis.enabled", Boolean.class, true)) {
            return;
        }
        Set<String> readiness = readinessInclude(environment);
        if (includesRedis(readiness)) {
            logger.warn(readinessWithRedis(readiness));
        }
        else {
            logger.info(line());
        }
    }

    static String line() {
        return "Redis health is the application's: /actuator/health shows its 'redis' component and is DOWN while "
                + "Redis is, though the gateway keeps serving (the limiter decides locally); readiness does not "
                + "depend on Redis (the readiness group holds readinessState only), so probe "
                + "/actuator/health/readiness (management.endpoint.health.probes.enabled=true off Kubernetes)";
    }

    static String readinessWithRedis(Set<String> readiness) {
        return READINESS_INCLUDE + "=" + String.join(",", readiness) + " takes Redis into readiness: a Redis outage "
                + "takes every gateway out of service, though each keeps serving by deciding locally. Leave 'redis' "
                + "out of the readiness group.";
    }

    static boolean includesRedis(Set<String> readiness) {
        return readiness.stream().map(member -> member.trim().toLowerCase(Locale.ROOT))
                .anyMatch(member -> member.equals("*") || member.equals("redis") || member.startsWith("redis/"));
    }

    /** The group's members as the application set them, a comma list or a YAML list; empty when unset. */
    static Set<String> readinessInclude(Environment environment) {
        return Binder.get(environment).bind(READINESS_INCLUDE, Bindable.setOf(String.class)).orElse(Set.of());
    }
}

package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.InvalidLimitException;
import org.springframework.core.env.Environment;

/**
 * Which Kafka brokers a feature talks to: its own {@code bootstrap-servers} setting, else Spring Boot's
 * {@code spring.kafka.bootstrap-servers}. Read from the environment, not from bound properties, because the
 * conditions that switch the Kafka beans on need the answer before any properties are bound.
 */
final class KafkaBootstrapServers {

    static final String EVENTS = "ratelimit.events.kafka.bootstrap-servers";
    static final String REGIONS = "ratelimit.regions.kafka.bootstrap-servers";
    static final String SPRING = "spring.kafka.bootstrap-servers";

    private KafkaBootstrapServers() {
    }

    /** The decision events' brokers, or {@code null} when none are configured. */
    static String forEvents(Environment environment) {
        return resolve(environment, EVENTS);
    }

    /** The decision events' brokers, which {@code ratelimit.events.kafka.enabled=true} insists on. */
    static String requiredForEvents(Environment environment) {
        String servers = forEvents(environment);
        if (servers == null) {
            throw new IllegalStateException("ratelimit.events.kafka.enabled is true, but no Kafka bootstrap servers "
                    + "are configured: set " + EVENTS + " or " + SPRING + ".");
        }
        return servers;
    }

    /** The region shares' brokers, or {@code null} when none are configured. */
    static String forRegions(Environment environment) {
        return resolve(environment, REGIONS);
    }

    /**
     * Refuses the start-up when the limiter's own settings ask for Kafka but its client is not on the class path: the
     * starters leave spring-kafka to the application, and events or shares dropped in silence would surprise it.
     * Spring Boot's {@code spring.kafka.bootstrap-servers} alone asks nothing of the limiter.
     */
    static void refuseWithoutClient(Environment environment, String setting, String feature) {
        String value = environment.getProperty(setting);
        if (value == null || value.isBlank() || value.equalsIgnoreCase("false")) {
            return;
        }
        throw new InvalidLimitException(setting, setting + " is set, but spring-kafka is not on the class path, so "
                + feature + " would go nowhere. Add org.springframework.kafka:spring-kafka to the application (the "
                + "starter leaves it out), or remove the setting.");
    }

    /** {@code own}, else Spring Boot's; a blank setting counts as unset. */
    static String resolve(Environment environment, String own) {
        String servers = environment.getProperty(own);
        if (servers == null || servers.isBlank()) {
            servers = environment.getProperty(SPRING);
        }
        return servers == null || servers.isBlank() ? null : servers;
    }
}

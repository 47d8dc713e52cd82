package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.InvalidLimitException;
import org.springframework.core.env.Environment;

/**
 * Which Kafka brokers a feature talks to: its own {@code bootstrap-servers} setting, else Spring Boot's
 * {@code spring.kafka.bootstrap-servers}. Read from the environment, not from bound properties, because the
 * conditions that switch the Kafka beans on need the answer before any properties are bound.
 */
public final class KafkaBootstrapServers {

    static final String EVENTS = "ratelimit.events.kafka.bootstrap-servers";
    static final String REGIONS = "ratelimit.regions.kafka.bootstrap-servers";
    static final String SPRING = "spring.kafka.bootstrap-servers";
    static final String ABUSE = "ratelimit.abuse.kafka.bootstrap-servers";

    private KafkaBootstrapServers() {
    }

    /** The decision events' brokers, or {@code null} when none are configured. */
    public static String forEvents(Environment environment) {
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

    /** The abuse scores' brokers, or {@code null} when none are configured. */
    static String forAbuse(Environment environment) {
        return resolve(environment, ABUSE);
    }

    /**
     * Refuses the start-up where a feature is to use Kafka (its condition matched) but the client is not on the class
     * path: the starters leave spring-kafka to the application, and events or shares dropped in silence would
     * surprise it (an application upgraded from a starter that brought spring-kafka would lose them unawares).
     *
     * @param own the feature's own bootstrap-servers setting, named in the message when it is the one set
     * @param optOut how to go without Kafka, for the message
     */
    static void refuseWithoutClient(Environment environment, String own, String feature, String optOut) {
        String setting = hasText(environment.getProperty(own)) || !hasText(environment.getProperty(SPRING)) ? own
                : SPRING;
        throw new InvalidLimitException(setting, feature + " are to go through Kafka (" + setting + "), but "
                + "spring-kafka is not on the class path. Add org.springframework.kafka:spring-kafka to the "
                + "application (the starter leaves it out), or " + optOut + ".");
    }

    private static boolean hasText(String value) {
        return value != null && !value.isBlank();
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

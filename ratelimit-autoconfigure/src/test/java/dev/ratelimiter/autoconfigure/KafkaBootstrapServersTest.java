package dev.ratelimiter.autoconfigure;

import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** Each Kafka feature's own bootstrap servers first, then Spring Boot's; blank counts as unset. */
class KafkaBootstrapServersTest {

    @Test
    void aFeaturesOwnServersWinOverSpringKafkas() {
        MockEnvironment environment = new MockEnvironment()
                .withProperty("ratelimit.events.kafka.bootstrap-servers", "events:9092")
                .withProperty("ratelimit.regions.kafka.bootstrap-servers", "regional:9092")
                .withProperty("spring.kafka.bootstrap-servers", "boot:9092");

        assertThat(KafkaBootstrapServers.forEvents(environment)).isEqualTo("events:9092");
        assertThat(KafkaBootstrapServers.forRegions(environment)).isEqualTo("regional:9092");
    }

    @Test
    void withoutItsOwnAFeatureUsesSpringKafkasServers() {
        MockEnvironment environment = new MockEnvironment()
                .withProperty("ratelimit.events.kafka.bootstrap-servers", " ")
                .withProperty("spring.kafka.bootstrap-servers", "boot:9092");

        assertThat(KafkaBootstrapServers.forEvents(environment)).as("blank is unset").isEqualTo("boot:9092");
        assertThat(KafkaBootstrapServers.forRegions(environment)).isEqualTo("boot:9092");
    }

    @Test
    void noServersOrOnlyBlankOnesAreNone() {
        assertThat(KafkaBootstrapServers.forEvents(new MockEnvironment())).isNull();
        assertThat(KafkaBootstrapServers.forRegions(new MockEnvironment()
                .withProperty("ratelimit.regions.kafka.bootstrap-servers", "")
                .withProperty("spring.kafka.bootstrap-servers", "  "))).isNull();
    }

    @Test
    void eventsSwitchedOnWithoutServersSayWhatToSet() {
        assertThatIllegalStateException().isThrownBy(() -> KafkaBootstrapServers.requiredForEvents(
                new MockEnvironment())).withMessage("ratelimit.events.kafka.enabled is true, but no Kafka bootstrap "
                        + "servers are configured: set ratelimit.events.kafka.bootstrap-servers or "
                        + "spring.kafka.bootstrap-servers.");
        assertThat(KafkaBootstrapServers.requiredForEvents(new MockEnvironment()
                .withProperty("spring.kafka.bootstrap-servers", "boot:9092"))).isEqualTo("boot:9092");
    }
}

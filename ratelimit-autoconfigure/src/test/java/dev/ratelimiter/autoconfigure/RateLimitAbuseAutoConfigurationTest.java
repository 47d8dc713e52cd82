package dev.ratelimiter.autoconfigure;

import java.time.Clock;
import java.time.Duration;
import java.util.Set;

import dev.ratelimiter.core.AbuseScores;
import dev.ratelimiter.kafka.AbuseScoreListener;
import dev.ratelimiter.kafka.AbuseScorePublisher;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitAbuseAutoConfigurationTest {

    /** A port nothing listens on: the consumer is built and keeps trying, never reaching a broker. */
    static final String NO_BROKER = "127.0.0.1:9";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAbuseAutoConfiguration.class,
                    RateLimitAutoConfiguration.class));

    @Test
    void offByDefault() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(AbuseScores.class));
    }

    @Test
    void onTheScoresFollowTheirSettingsAndWithoutKafkaNothingIsRead() {
        runner.withPropertyValues("ratelimit.abuse.enabled=true", "ratelimit.abuse.min-factor=0.25",
                "ratelimit.abuse.half-life=2m", "ratelimit.abuse.exempt-tiers=internal").run(context -> {
                    AbuseScores.Settings settings = context.getBean(AbuseScores.class).settings();
                    assertThat(settings.minFactor()).isEqualTo(0.25);
                    assertThat(settings.halfLife()).isEqualTo(Duration.ofMinutes(2));
                    assertThat(settings.exemptTiers()).containsExactly("internal");
                    assertThat(context).doesNotHaveBean(AbuseScoreListener.class)
                            .doesNotHaveBean(AbuseScorePublisher.class);
                });
    }

    @Test
    void anInvalidFloorIsRefusedAtStartUpByName() {
        runner.withPropertyValues("ratelimit.abuse.enabled=true", "ratelimit.abuse.min-factor=0").run(context ->
                assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("ratelimit.abuse.min-factor must be above 0"));
    }

    @Test
    void withKafkaTheTopicIsReadAndTheHealthSaysWhetherItCanBe() {
        runner.withPropertyValues("ratelimit.abuse.enabled=true",
                "ratelimit.abuse.kafka.bootstrap-servers=" + NO_BROKER).run(context -> {
                    assertThat(context).hasSingleBean(AbuseScoreListener.class)
                            .hasSingleBean(AbuseScorePublisher.class);
                    Health health = context.getBean("abuseScoresHealthIndicator", HealthIndicator.class).health();
                    assertThat(health.getStatus().getCode()).isEqualTo("UP");
                    assertThat(health.getDetails()).containsEntry("topic", "ratelimit.abuse-scores")
                            .containsEntry("topicRead", false);
                });
    }

    @Test
    void kafkaConfiguredWithoutItsClientIsRefused() {
        runner.withClassLoader(new FilteredClassLoader(KafkaProducer.class))
                .withPropertyValues("ratelimit.abuse.enabled=true", "spring.kafka.bootstrap-servers=" + NO_BROKER)
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("Abuse scores are to go through Kafka (spring.kafka.bootstrap-servers)"));
    }

    @Test
    void theScaledClientsAreMeteredWithoutAClientTag() {
        runner.withPropertyValues("ratelimit.abuse.enabled=true")
                .withBean(io.micrometer.core.instrument.MeterRegistry.class,
                        io.micrometer.core.instrument.simple.SimpleMeterRegistry::new)
                .run(context -> {
                    AbuseScores scores = context.getBean(AbuseScores.class);
                    scores.apply("c1", new dev.ratelimiter.core.AbuseScore(1.0, null, "t", java.time.Instant.now(),
                            null));
                    io.micrometer.core.instrument.Gauge gauge = context.getBean(
                            io.micrometer.core.instrument.MeterRegistry.class).get("ratelimit.abuse.clients.scaled")
                            .gauge();
                    assertThat(gauge.value()).isEqualTo(1.0);
                    assertThat(gauge.getId().getTags()).isEmpty();
                });
    }

    @Test
    void aUserBeanTakesOver() {
        runner.withPropertyValues("ratelimit.abuse.enabled=true").withUserConfiguration(OwnScores.class)
                .run(context -> assertThat(context.getBean(AbuseScores.class).settings().maxClients()).isEqualTo(7));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnScores {

        @Bean
        AbuseScores ownScores() {
            return new AbuseScores(new AbuseScores.Settings(0.5, Duration.ofMinutes(1), 7, Set.of(), Set.of()),
                    Clock.systemUTC());
        }
    }
}

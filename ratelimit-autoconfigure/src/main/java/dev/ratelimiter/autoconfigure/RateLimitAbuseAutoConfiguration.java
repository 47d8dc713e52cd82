package dev.ratelimiter.autoconfigure;

import java.time.Clock;

import dev.ratelimiter.autoconfigure.actuate.AbuseScoresHealthIndicator;
import dev.ratelimiter.autoconfigure.metrics.AbuseMeters;
import dev.ratelimiter.core.AbuseScores;
import dev.ratelimiter.kafka.AbuseScoreListener;
import dev.ratelimiter.kafka.AbuseScorePublisher;
import dev.ratelimiter.kafka.RegionKafkaClients;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.Environment;

/**
 * Limits that follow an abuse score, on with {@code ratelimit.abuse.enabled=true}: the scores (read by the evaluator
 * and the decision events), their meters, and — with Kafka on the classpath and bootstrap servers known — the score
 * topic read in and operators' scores written out.
 */
@AutoConfiguration(before = { RateLimitAutoConfiguration.class, RateLimitEventsAutoConfiguration.class })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty("ratelimit.abuse.enabled")
@EnableConfigurationProperties(AbuseProperties.class)
public final class RateLimitAbuseAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    AbuseScores rateLimitAbuseScores(AbuseProperties properties, ObjectProvider<MeterRegistry> registries) {
        AbuseScores scores = new AbuseScores(properties.settings(), Clock.systemUTC());
        registries.ifAvailable(registry -> AbuseMeters.scores(registry, scores));
        return scores;
    }

    /** Scores meant to come through Kafka without its client: refused at start-up, not ignored. */
    @Configuration(proxyBeanMethods = false)
    @Lazy(false)
    @ConditionalOnMissingClass("org.apache.kafka.clients.producer.KafkaProducer")
    @Conditional(OnAbuseKafkaCondition.class)
    static class AbuseKafkaWithoutClient {

        AbuseKafkaWithoutClient(Environment environment) {
            KafkaBootstrapServers.refuseWithoutClient(environment, KafkaBootstrapServers.ABUSE, "Abuse scores",
                    "switch ratelimit.abuse.enabled off, or remove the bootstrap servers (scores then come "
                            + "through the rules API only, to each instance alone)");
        }
    }

    /** The score topic in, operators' scores out. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({ KafkaProducer.class, tools.jackson.databind.json.JsonMapper.class })
    @Conditional(OnAbuseKafkaCondition.class)
    static class AbuseKafka {

        @Bean(initMethod = "start", destroyMethod = "close")
        @ConditionalOnMissingBean
        AbuseScoreListener rateLimitAbuseScoreListener(AbuseScores scores, AbuseProperties properties,
                Environment environment, ObjectProvider<MeterRegistry> registries) {
            AbuseProperties.Kafka kafka = properties.getKafka();
            AbuseScoreListener listener = new AbuseScoreListener(RegionKafkaClients.consumer(
                    KafkaBootstrapServers.forAbuse(environment), "ratelimit-abuse-scores", kafka.getConsumer()),
                    kafka.getTopic(), scores);
            registries.ifAvailable(registry -> AbuseMeters.listener(registry, listener));
            return listener;
        }

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        AbuseScorePublisher rateLimitAbuseScorePublisher(AbuseProperties properties, Environment environment) {
            AbuseProperties.Kafka kafka = properties.getKafka();
            return new AbuseScorePublisher(RegionKafkaClients.producer(KafkaBootstrapServers.forAbuse(environment),
                    "ratelimit-abuse-scores", kafka.getProducer()), kafka.getTopic(), kafka.getPublishTimeout());
        }

        /** The {@code abuseScores} health component, with actuator. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(HealthIndicator.class)
        static class AbuseHealth {

            @Bean
            @ConditionalOnMissingBean(name = "abuseScoresHealthIndicator")
            HealthIndicator abuseScoresHealthIndicator(AbuseScores scores, AbuseScoreListener listener,
                    AbuseProperties properties) {
                return new AbuseScoresHealthIndicator(scores, listener, properties.getKafka().getTopic());
            }
        }
    }
}

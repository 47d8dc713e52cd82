package dev.ratelimiter.autoconfigure;

import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.RegionUsage;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.kafka.RegionShareListener;
import dev.ratelimiter.kafka.RegionUsagePublisher;
import dev.ratelimiter.kafka.TelemetryProducerConfig;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.env.Environment;

/**
 * Global limits over several regions, on when {@code ratelimit.regions.local} names this instance's region: this
 * region's shares (read by the evaluator), the usage counted per global bucket, and — with Kafka on the classpath
 * and bootstrap servers known — usage out to the rebalancer and shares in from it.
 */
@AutoConfiguration(before = RateLimitAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnProperty("ratelimit.regions.local")
@EnableConfigurationProperties(RegionProperties.class)
public final class RateLimitRegionsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RegionShares rateLimitRegionShares(RegionProperties properties) {
        Map<String, Double> weights = properties.getWeights().isEmpty() ? Map.of(properties.getLocal(), 1.0)
                : properties.getWeights();
        return new RegionShares(properties.getLocal(), weights);
    }

    @Bean
    @ConditionalOnMissingBean
    RegionUsage rateLimitRegionUsage(RuleSetHolder rules, RegionProperties properties) {
        return new RegionUsage(rules, properties.getMaxKeys());
    }

    /** Usage out and shares in, through this region's Kafka cluster. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({ KafkaProducer.class, tools.jackson.databind.json.JsonMapper.class })
    @Conditional(RegionKafka.BootstrapServersKnown.class)
    static class RegionKafka {

        /** Bootstrap servers of ratelimit.regions.kafka, else of spring.kafka. */
        static final class BootstrapServersKnown extends SpringBootCondition {

            @Override
            public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
                Environment environment = context.getEnvironment();
                String servers = environment.getProperty("ratelimit.regions.kafka.bootstrap-servers",
                        environment.getProperty("spring.kafka.bootstrap-servers", ""));
                return servers.isBlank() ? ConditionOutcome.noMatch("no Kafka bootstrap servers for region shares")
                        : ConditionOutcome.match("region shares through Kafka at " + servers);
            }
        }

        @Bean(initMethod = "start", destroyMethod = "close")
        @ConditionalOnMissingBean
        RegionUsagePublisher rateLimitRegionUsagePublisher(RegionUsage usage, RegionProperties properties,
                Environment environment, ObjectProvider<MeterRegistry> registries) {
            RegionProperties.Kafka kafka = properties.getKafka();
            Map<String, Object> config = TelemetryProducerConfig.of(servers(properties, environment),
                    "ratelimit-region-usage", 50, 10_000, kafka.getProducer());
            RegionUsagePublisher publisher = new RegionUsagePublisher(usage,
                    new KafkaProducer<String, String>(config), kafka.getUsageTopic(),
                    properties.getLocal(),
                    // host:pid, and a random part: two gateways of one region in one JVM (tests) report apart.
                    RateLimitEventsAutoConfiguration.defaultInstance() + ":"
                            + Long.toHexString(new Random().nextLong()),
                    properties.getUsageInterval(), Clock.systemUTC());
            registries.ifAvailable(registry -> {
                FunctionCounter.builder("ratelimit.region.usage", publisher, RegionUsagePublisher::sent)
                        .tag("result", "sent").description("Usage records Kafka acknowledged").register(registry);
                FunctionCounter.builder("ratelimit.region.usage", publisher, RegionUsagePublisher::failed)
                        .tag("result", "failed").description("Usage records Kafka could not take").register(registry);
                Gauge.builder("ratelimit.region.usage.buckets", usage, RegionUsage::keys)
                        .description("Global buckets counted this interval").register(registry);
            });
            return publisher;
        }

        @Bean(initMethod = "start", destroyMethod = "close")
        @ConditionalOnMissingBean
        RegionShareListener rateLimitRegionShareListener(RegionShares shares, RegionProperties properties,
                Environment environment, ObjectProvider<MeterRegistry> registries) {
            RegionProperties.Kafka kafka = properties.getKafka();
            Map<String, Object> config = new HashMap<>();
            config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers(properties, environment));
            config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            config.put(ConsumerConfig.CLIENT_ID_CONFIG, "ratelimit-region-shares");
            // The topic is the operator's to create (compacted); a consumer must not create a plain one by asking.
            config.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
            config.putAll(kafka.getConsumer());
            RegionShareListener listener = new RegionShareListener(
                    new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer()),
                    kafka.getSharesTopic(), shares, properties.getStaleAfter(), Clock.systemUTC());
            registries.ifAvailable(registry -> {
                Gauge.builder("ratelimit.region.shares.moved", shares, RegionShares::moved)
                        .description("Global buckets whose share here is not the default split").register(registry);
                Gauge.builder("ratelimit.region.shares.stale", shares,
                        s -> s.stale(Clock.systemUTC().instant(), properties.getStaleAfter()) ? 1 : 0)
                        .description("1 while nothing was heard from the rebalancer for stale-after: the region "
                                + "keeps its last shares").register(registry);
                FunctionCounter.builder("ratelimit.region.shares.records", listener, RegionShareListener::refused)
                        .tag("result", "refused").description("Share records skipped as unusable")
                        .register(registry);
                FunctionCounter.builder("ratelimit.region.shares.records", listener, RegionShareListener::applied)
                        .tag("result", "applied").description("Share records applied").register(registry);
            });
            return listener;
        }

        /** The {@code regionShares} health component, with actuator. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(HealthIndicator.class)
        static class RegionHealth {

            @Bean
            @ConditionalOnMissingBean(name = "regionSharesHealthIndicator")
            HealthIndicator regionSharesHealthIndicator(RegionShares shares, RegionShareListener listener,
                    RegionUsagePublisher publisher, RegionProperties properties) {
                return new RegionSharesHealthIndicator(shares, listener, publisher, properties.getStaleAfter(),
                        Clock.systemUTC());
            }
        }

        private static String servers(RegionProperties properties, Environment environment) {
            String own = properties.getKafka().getBootstrapServers();
            return own != null && !own.isBlank() ? own : environment.getProperty("spring.kafka.bootstrap-servers");
        }
    }
}

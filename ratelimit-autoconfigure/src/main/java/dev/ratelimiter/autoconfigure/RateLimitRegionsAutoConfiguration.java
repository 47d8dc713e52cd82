package dev.ratelimiter.autoconfigure;

import java.time.Clock;
import java.util.Map;
import java.util.Random;

import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.RegionUsage;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.kafka.RegionKafkaClients;
import dev.ratelimiter.kafka.RegionShareListener;
import dev.ratelimiter.kafka.RegionUsagePublisher;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.producer.KafkaProducer;
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
        if (properties.getWeights().size() < 2) {
            // One region alone would enforce each global limit whole here, beside the others doing the same.
            throw new InvalidLimitException("ratelimit.regions.weights", "ratelimit.regions.local is '"
                    + properties.getLocal() + "', but ratelimit.regions.weights lists " + properties.getWeights()
                    .keySet() + ": list every region with its weight (the same in every region), e.g. "
                    + "{us-east-1: 1, eu-central-1: 1, ap-southeast-1: 1}, or leave ratelimit.regions.local unset.");
        }
        return new RegionShares(properties.getLocal(), properties.getWeights());
    }

    @Bean
    @ConditionalOnMissingBean
    RegionUsage rateLimitRegionUsage(RuleSetHolder rules, RegionShares shares, RegionProperties properties,
            ObjectProvider<LiveInstances> instances, ObjectProvider<MeterRegistry> registries) {
        LiveInstances live = instances.getIfAvailable(() -> LiveInstances.SINGLE);
        RegionUsage usage = new RegionUsage(rules, shares, live::count, properties.getMaxKeys());
        registries.ifAvailable(registry -> {
            Gauge.builder("ratelimit.region.usage.buckets", usage, RegionUsage::keys)
                    .description("Global buckets counted this interval").register(registry);
            FunctionCounter.builder("ratelimit.region.usage.overflow", usage, RegionUsage::overflow)
                    .description("Verdicts of global buckets not counted: the count was full").register(registry);
        });
        return usage;
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
        RegionUsagePublisher rateLimitRegionUsagePublisher(RegionUsage usage, RegionShares shares,
                ClientIdKeyring clientIds, RegionProperties properties, Environment environment,
                ObjectProvider<MeterRegistry> registries) {
            RegionProperties.Kafka kafka = properties.getKafka();
            // host:pid, and a random part: two gateways of one region in one JVM (tests) report apart.
            String instance = RateLimitEventsAutoConfiguration.defaultInstance() + ":"
                    + Long.toHexString(new Random().nextLong());
            RegionUsagePublisher publisher = new RegionUsagePublisher(usage, RegionKafkaClients.producer(
                    servers(properties, environment), kafka.getProducer()), kafka.getUsageTopic(),
                    new RegionUsagePublisher.Reporter(properties.getLocal(), instance, shares.fingerprint(),
                            clientIds.current().scheme()), properties.getUsageInterval(), Clock.systemUTC());
            registries.ifAvailable(registry -> {
                FunctionCounter.builder("ratelimit.region.usage", publisher, RegionUsagePublisher::sent)
                        .tag("result", "sent").description("Usage records Kafka acknowledged").register(registry);
                FunctionCounter.builder("ratelimit.region.usage", publisher, RegionUsagePublisher::failed)
                        .tag("result", "failed").description("Usage records Kafka could not take").register(registry);
            });
            return publisher;
        }

        @Bean(initMethod = "start", destroyMethod = "close")
        @ConditionalOnMissingBean
        RegionShareListener rateLimitRegionShareListener(RegionShares shares, RegionProperties properties,
                Environment environment, ObjectProvider<MeterRegistry> registries) {
            RegionShareListener listener = new RegionShareListener(RegionKafkaClients.consumer(
                    servers(properties, environment), properties.getKafka().getConsumer()),
                    properties.getKafka().getSharesTopic(), shares, properties.getFloor(), properties.getStaleAfter(),
                    Clock.systemUTC());
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
                FunctionCounter.builder("ratelimit.region.shares.records", listener, RegionShareListener::mismatched)
                        .tag("result", "mismatched").description("Share records made under other regions or weights, "
                                + "applied no higher than the default split").register(registry);
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

package dev.ratelimiter.autoconfigure;

import java.time.Clock;

import dev.ratelimiter.autoconfigure.actuate.RegionSharesHealthIndicator;
import dev.ratelimiter.autoconfigure.metrics.RegionMeters;
import dev.ratelimiter.autoconfigure.store.InstanceName;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.LiveInstances;
import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.RegionUsage;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.kafka.RegionKafkaClients;
import dev.ratelimiter.kafka.RegionShareListener;
import dev.ratelimiter.kafka.RegionUsagePublisher;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
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
        return properties.shares();
    }

    @Bean
    @ConditionalOnMissingBean
    RegionUsage rateLimitRegionUsage(RuleSetHolder rules, RegionShares shares, RegionProperties properties,
            ObjectProvider<LiveInstances> instances, ObjectProvider<MeterRegistry> registries) {
        LiveInstances live = instances.getIfAvailable(() -> LiveInstances.SINGLE);
        RegionUsage usage = new RegionUsage(rules, shares, live::count, properties.getMaxKeys());
        registries.ifAvailable(registry -> RegionMeters.usage(registry, usage));
        return usage;
    }

    /**
     * Region usage and shares meant for Kafka without its client: refused, not left on the default split (at
     * start-up, lazy initialisation or not).
     */
    @Configuration(proxyBeanMethods = false)
    @Lazy(false)
    @ConditionalOnMissingClass("org.apache.kafka.clients.producer.KafkaProducer")
    @Conditional(OnRegionKafkaCondition.class)
    static class RegionKafkaWithoutClient {

        RegionKafkaWithoutClient(Environment environment) {
            KafkaBootstrapServers.refuseWithoutClient(environment, KafkaBootstrapServers.REGIONS,
                    "Region usage and shares", "remove the bootstrap servers (every region then keeps its "
                            + "configured split)");
        }
    }

    /** Usage out and shares in, through this region's Kafka cluster. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({ KafkaProducer.class, tools.jackson.databind.json.JsonMapper.class })
    @Conditional(OnRegionKafkaCondition.class)
    static class RegionKafka {

        @Bean(initMethod = "start", destroyMethod = "close")
        @ConditionalOnMissingBean
        RegionUsagePublisher rateLimitRegionUsagePublisher(RegionUsage usage, RegionShares shares,
                ClientIdKeyring clientIds, RegionProperties properties, Environment environment,
                ObjectProvider<MeterRegistry> registries) {
            RegionProperties.Kafka kafka = properties.getKafka();
            RegionUsagePublisher publisher = new RegionUsagePublisher(usage, RegionKafkaClients.producer(
                    KafkaBootstrapServers.forRegions(environment), kafka.getProducer()), kafka.getUsageTopic(),
                    new RegionUsagePublisher.Reporter(properties.getLocal(), InstanceName.unique(), shares.fingerprint(),
                            clientIds.current().scheme()), properties.getUsageInterval(), Clock.systemUTC());
            registries.ifAvailable(registry -> RegionMeters.publisher(registry, publisher));
            return publisher;
        }

        @Bean(initMethod = "start", destroyMethod = "close")
        @ConditionalOnMissingBean
        RegionShareListener rateLimitRegionShareListener(RegionShares shares, RuleSetHolder rules,
                RegionProperties properties, Environment environment, ObjectProvider<MeterRegistry> registries) {
            RegionShareListener listener = new RegionShareListener(RegionKafkaClients.consumer(
                    KafkaBootstrapServers.forRegions(environment), properties.getKafka().getConsumer()),
                    properties.getKafka().getSharesTopic(), shares, rules, properties.getFloor(),
                    properties.getStaleAfter(), Clock.systemUTC());
            registries.ifAvailable(registry -> RegionMeters.shares(registry, shares, listener,
                    properties.getStaleAfter(), Clock.systemUTC()));
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
    }
}

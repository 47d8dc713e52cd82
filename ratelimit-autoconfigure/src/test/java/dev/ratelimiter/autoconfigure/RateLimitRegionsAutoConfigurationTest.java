package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.RegionUsage;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.kafka.RegionShareListener;
import dev.ratelimiter.kafka.RegionUsagePublisher;
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

class RateLimitRegionsAutoConfigurationTest {

    /** A port nothing listens on: the Kafka clients are built and keep trying, never reaching a broker. */
    static final String NO_BROKER = "127.0.0.1:9";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitRegionsAutoConfiguration.class,
                    RateLimitAutoConfiguration.class));

    private final ApplicationContextRunner threeRegions = runner.withPropertyValues("ratelimit.regions.local=us-east-1",
            "ratelimit.regions.weights[us-east-1]=1", "ratelimit.regions.weights[eu-central-1]=1",
            "ratelimit.regions.weights[ap-southeast-1]=2");

    @Test
    void withoutARegionNothingIsSplitAndNoRegionBeanExists() {
        runner.run(context -> {
            assertThat(context).doesNotHaveBean(RegionShares.class).doesNotHaveBean(RegionUsage.class);
            assertThat(context.getBean(RateLimitEvaluator.class).region()).isNull();
        });
    }

    @Test
    void aRegionWithItsWeightsSplitsGlobalRulesAndCountsTheirUsage() {
        threeRegions.run(context -> {
            RegionShares shares = context.getBean(RegionShares.class);
            assertThat(shares.regions()).containsExactly("ap-southeast-1", "eu-central-1", "us-east-1");
            assertThat(shares.defaultSplit(1_000)).containsExactly(500, 250, 250);
            assertThat(context.getBean(RateLimitEvaluator.class).region()).isEqualTo("us-east-1");
            assertThat(context.getBeansOfType(VerdictListener.class).values()).hasAtLeastOneElementOfType(
                    RegionUsage.class);
            assertThat(context).as("no Kafka configured").doesNotHaveBean(RegionUsagePublisher.class)
                    .doesNotHaveBean(RegionShareListener.class);
        });
    }

    @Test
    void aRegionWithoutTheOthersIsRefusedAtStartup() {
        runner.withPropertyValues("ratelimit.regions.local=us-east-1").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageContaining("list every region with its weight"));
    }

    @Test
    void aGlobalLimitTooSmallToSplitIsRefusedByName() {
        threeRegions.withPropertyValues("ratelimit.rules.tiny.capacity=2", "ratelimit.rules.tiny.refill-tokens=1",
                "ratelimit.rules.tiny.scope=global").run(context -> assertThat(context).hasFailed().getFailure()
                        .rootCause().hasMessageContaining("rule 'tiny' is global over 3 regions, but its quota 2"));
        threeRegions.withPropertyValues("ratelimit.rules.tiny.capacity=3", "ratelimit.rules.tiny.refill-tokens=1",
                "ratelimit.rules.tiny.scope=global").run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void weightsWithoutThisRegionAreRefusedAtStartupByName() {
        runner.withPropertyValues("ratelimit.regions.local=us-west-2", "ratelimit.regions.weights[us-east-1]=1",
                "ratelimit.regions.weights[eu-central-1]=1")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("not this instance's region 'us-west-2'"));
    }

    @Test
    void withKafkaUsageGoesOutAndSharesComeInAndHealthSaysTheyAreStaleUntilTheRebalancerIsHeard() {
        threeRegions.withPropertyValues("ratelimit.regions.kafka.bootstrap-servers=" + NO_BROKER).run(context -> {
            assertThat(context).hasSingleBean(RegionUsagePublisher.class).hasSingleBean(RegionShareListener.class);
            Health health = context.getBean("regionSharesHealthIndicator", HealthIndicator.class).health();
            assertThat(health.getStatus().getCode()).isEqualTo("UP");
            assertThat(health.getDetails()).containsEntry("region", "us-east-1").containsEntry("sharesStale", true)
                    .containsEntry("sharesReadToEnd", false).containsEntry("sharesHeldToFloor", true)
                    .containsEntry("readingShares", false).containsKey("problem");
            assertThat(context.getBean(RegionShares.class).awaitingShares()).as("held to the floor until read")
                    .isTrue();
        });
    }

    @Test
    void bootstrapServersThatDoNotResolveDoNotStopTheStartUp() {
        threeRegions.withPropertyValues("ratelimit.regions.kafka.bootstrap-servers=kafka.invalid:9092")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(RegionUsagePublisher.class));
    }

    @Test
    void springKafkasServersServeToo() {
        threeRegions.withPropertyValues("spring.kafka.bootstrap-servers=" + NO_BROKER)
                .run(context -> assertThat(context).hasSingleBean(RegionShareListener.class));
    }

    @Test
    void withoutTheKafkaClientSharesStayOnTheDefaultSplitAndBootstrapServersStopTheStartUp() {
        threeRegions.withClassLoader(new FilteredClassLoader(KafkaProducer.class)).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(RegionShares.class)
                    .doesNotHaveBean(RegionShareListener.class);
        });
        for (String servers : new String[] { "ratelimit.regions.kafka.bootstrap-servers", "spring.kafka.bootstrap-servers" }) {
            threeRegions.withPropertyValues(servers + "=" + NO_BROKER)
                    .withClassLoader(new FilteredClassLoader(KafkaProducer.class))
                    .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                            .isInstanceOf(InvalidLimitException.class).hasMessageContaining(
                                    "Region usage and shares are to go through Kafka (" + servers + "), but spring-kafka "
                                            + "is not on the class path"));
        }
    }

    @Test
    void aUserBeanReplacesTheShares() {
        threeRegions.withUserConfiguration(OwnShares.class).run(context -> assertThat(context.getBean(
                RegionShares.class)).isSameAs(context.getBean(OwnShares.class).shares));
    }

    @Test
    void switchedOffWithTheLimiter() {
        threeRegions.withPropertyValues("ratelimit.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(RegionShares.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnShares {

        final RegionShares shares = RegionShares.single("mine");

        @Bean
        RegionShares ownShares() {
            return shares;
        }
    }
}

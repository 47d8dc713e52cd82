package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.testsupport.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.availability.ApplicationAvailabilityAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.health.DataRedisReactiveHealthContributorAutoConfiguration;
import org.springframework.boot.health.actuate.endpoint.HealthEndpointGroups;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.AvailabilityProbesAutoConfiguration;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.application.AvailabilityHealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application's Redis health stays the application's: the limiter's defaults do not switch it off, readiness
 * (Spring Boot's probe group) does not take it in, and one line at start-up says which to probe. Readiness staying
 * UP with Redis down, on a running gateway: {@code StoreOutageIntegrationTest}.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisHealthLeftToTheApplicationTest {

    @RegisterExtension
    static final RedisServerExtension redis = RedisServerExtension.shared();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            // what SpringApplication does with the starter's EnvironmentPostProcessor, which a runner does not run
            .withInitializer(context -> new RateLimitDefaults().postProcessEnvironment(context.getEnvironment(),
                    new SpringApplication()))
            .withConfiguration(AutoConfigurations.of(ApplicationAvailabilityAutoConfiguration.class,
                    DataRedisAutoConfiguration.class,
                    DataRedisReactiveAutoConfiguration.class, DataRedisReactiveHealthContributorAutoConfiguration.class,
                    HealthContributorAutoConfiguration.class, HealthContributorRegistryAutoConfiguration.class,
                    AvailabilityHealthContributorAutoConfiguration.class, AvailabilityProbesAutoConfiguration.class,
                    HealthEndpointAutoConfiguration.class, RateLimitRedisAutoConfiguration.class,
                    RateLimitAutoConfiguration.class, RateLimitActuatorAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.url=" + redis.url(), "ratelimit.store.type=redis",
                    "management.endpoint.health.probes.enabled=true");

    @Test
    void theApplicationsRedisHealthIsThereButNotInReadinessAndOneLineSaysWhatToProbe(CapturedOutput output) {
        runner.run(context -> {
            assertThat(context).hasNotFailed().hasBean("redisHealthContributor");
            HealthEndpointGroups groups = context.getBean(HealthEndpointGroups.class);
            assertThat(groups.getPrimary().isMember("redis")).as("/actuator/health shows Redis").isTrue();
            assertThat(groups.get("readiness").isMember("redis")).as("readiness does not").isFalse();
            assertThat(groups.get("liveness").isMember("redis")).isFalse();
        });
        assertThat(output.getOut().split("Redis health is the application's", -1)).as("one line").hasSize(2);
        assertThat(output).contains("readiness does not depend on Redis")
                .contains("probe /actuator/health/readiness");
    }

    @Test
    void aReadinessGroupThatTakesRedisInIsWarnedAbout(CapturedOutput output) {
        runner.withPropertyValues("management.endpoint.health.group.readiness.include[0]=readinessState",
                "management.endpoint.health.group.readiness.include[1]=redis").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(HealthEndpointGroups.class).get("readiness").isMember("redis"))
                            .isTrue();
                });
        assertThat(output).contains("WARN").contains(
                "management.endpoint.health.group.readiness.include=readinessState,redis takes Redis into readiness")
                .doesNotContain("Redis health is the application's");
    }

    @Test
    void anApplicationThatSwitchesRedisHealthOffStillCanAndIsToldNothing(CapturedOutput output) {
        runner.withPropertyValues("management.health.redis.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("redisHealthContributor"));
        assertThat(output).doesNotContain("Redis health is the application's").doesNotContain("into readiness");
    }
}

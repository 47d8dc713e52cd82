package dev.ratelimiter.autoconfigure.mvc;

import dev.ratelimiter.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.LoadShedders;
import dev.ratelimiter.core.Priority;
import dev.ratelimiter.mvc.MvcLoadShedding;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitMvcSheddingAutoConfigurationTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                    RateLimitMvcSheddingAutoConfiguration.class, RateLimitMvcAutoConfiguration.class))
            .withPropertyValues("ratelimit.store.type=memory");

    @Test
    void onAServletGatewayTheSheddersAndTheirMetersArePresent() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("ratelimit.shedding.upstreams.api.max-in-flight=4",
                        "ratelimit.shedding.upstreams.api.route-ids=a,b", "ratelimit.shedding.default-priority=background")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(MvcLoadShedding.class);
                    LoadShedders shedders = context.getBean(LoadShedders.class);
                    assertThat(shedders.byRoute()).containsOnlyKeys("a", "b");
                    assertThat(shedders.defaultPriority()).isEqualTo(Priority.BACKGROUND);
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("ratelimit.upstream.in.flight").tag("upstream", "api").gauge().value())
                            .isEqualTo(0.0);
                    assertThat(registry.get("ratelimit.upstream.limit").tag("upstream", "api").gauge().value())
                            .isEqualTo(4.0);
                    assertThat(registry.get("ratelimit.shed").tag("priority", "critical").functionCounter()
                            .count()).isEqualTo(0.0);
                });
    }

    @Test
    void sheddingSwitchedOffOrTheLimiterSwitchedOffLeavesNoShedder() {
        runner.withPropertyValues("ratelimit.shedding.enabled=false").run(context -> assertThat(context)
                .hasNotFailed().doesNotHaveBean(MvcLoadShedding.class).doesNotHaveBean(LoadShedders.class));
        runner.withPropertyValues("ratelimit.enabled=false").run(context -> assertThat(context)
                .hasNotFailed().doesNotHaveBean(MvcLoadShedding.class).doesNotHaveBean(LoadShedders.class));
    }

    @Test
    void aSettingThatCannotWorkFailsTheStartUpNamingIt() {
        runner.withPropertyValues("ratelimit.shedding.upstreams.api.max-in-flight=0").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLimitException.class)
                    .hasMessageContaining("ratelimit.shedding.upstreams.api.max-in-flight");
        });
    }

    @Test
    void inAReactiveApplicationItBacksOff() {
        new ReactiveWebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                        RateLimitMvcSheddingAutoConfiguration.class))
                .withPropertyValues("ratelimit.store.type=memory")
                .run(context -> assertThat(context).doesNotHaveBean(MvcLoadShedding.class)
                        .doesNotHaveBean(LoadShedders.class));
    }
}

package dev.ratelimiter.autoconfigure;

import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.core.EventQueue;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.StoreMetrics;
import dev.ratelimiter.kafka.KafkaEventSink;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the starters leave to the application (the Prometheus registry, spring-kafka) and what they keep (Spring
 * Security, for the operator endpoints): each hidden in turn, the limiter starts without it, and where the
 * application's settings need it, the start-up fails with what to add. No operator endpoint is ever served open
 * because a dependency is missing.
 */
class OptionalDependenciesTest {

    private static final FilteredClassLoader WITHOUT_PROMETHEUS = new FilteredClassLoader("io.micrometer.prometheusmetrics",
            "io.prometheus");
    private static final FilteredClassLoader WITHOUT_KAFKA = new FilteredClassLoader("org.springframework.kafka",
            "org.apache.kafka");
    private static final FilteredClassLoader WITHOUT_SPRING_SECURITY = new FilteredClassLoader(
            "org.springframework.security");
    private static final FilteredClassLoader WITHOUT_ANY = new FilteredClassLoader("io.micrometer.prometheusmetrics",
            "io.prometheus", "org.springframework.kafka", "org.apache.kafka", "org.springframework.security");

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                    PrometheusMetricsExportAutoConfiguration.class, RateLimitAutoConfiguration.class,
                    RateLimitActuatorAutoConfiguration.class, RateLimitEventsAutoConfiguration.class,
                    RateLimitOperatorSecurityAutoConfiguration.class))
            .withPropertyValues("management.endpoints.web.exposure.include=health,prometheus,ratelimit",
                    "ratelimit.management.security.admin.password=long-enough-secret");

    @Test
    void withEverythingPresentTheRegistryIsPrometheusAndTheEndpointsAreAuthenticated() {
        runner.run(context -> assertThat(context).hasNotFailed().hasSingleBean(PrometheusMeterRegistry.class)
                .hasSingleBean(OperatorAccounts.class).hasSingleBean(RateLimitEvaluator.class));
    }

    @Test
    void withoutThePrometheusRegistryTheMetersGoToTheRegistryTheApplicationHas() {
        runner.withClassLoader(WITHOUT_PROMETHEUS).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(PrometheusMeterRegistry.class)
                    .hasSingleBean(StoreMetrics.class).hasSingleBean(RateLimitEvaluator.class);
            assertThat(context.getBean(MeterRegistry.class).find("ratelimit.rules.version").gauge())
                    .as("the limiter's meters, on Boot's default registry").isNotNull();
        });
    }

    @Test
    void withoutSpringKafkaEventsStayInMemoryAndAskingForKafkaSaysWhatToAdd() {
        runner.withClassLoader(WITHOUT_KAFKA).run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(EventQueue.class).doesNotHaveBean(KafkaEventSink.class));
        runner.withClassLoader(WITHOUT_KAFKA).withPropertyValues("ratelimit.events.kafka.bootstrap-servers=kafka:9092")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .isInstanceOf(InvalidLimitException.class)
                        .hasMessageContaining("Add org.springframework.kafka:spring-kafka"));
    }

    @Test
    void withoutSpringSecurityEndpointsBeyondLoopbackNeverStartOpen() {
        // the default: the endpoints on the server port, on every address
        runner.withClassLoader(WITHOUT_SPRING_SECURITY).run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().isInstanceOf(InvalidLimitException.class)
                .hasMessageContaining("must be authenticated, but Spring Security")
                .hasMessageContaining("not on the classpath"));
        runner.withClassLoader(WITHOUT_SPRING_SECURITY)
                .withPropertyValues("management.server.port=8081", "management.server.address=0.0.0.0",
                        "ratelimit.rules-api.enabled=true")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("the management port on 0.0.0.0 and must be authenticated"));
        // loopback only: nothing beyond this host reaches them, and nothing asks for Spring Security
        runner.withClassLoader(WITHOUT_SPRING_SECURITY).withPropertyValues("server.address=127.0.0.1")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(OperatorAccounts.class)
                        .hasSingleBean(RateLimitEvaluator.class));
    }

    @Test
    void theLeanestGatewayOnLoopbackStartsWithNoneOfThem() {
        runner.withClassLoader(WITHOUT_ANY).withPropertyValues("server.address=127.0.0.1")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(RateLimitEvaluator.class)
                        .hasSingleBean(EventQueue.class).hasSingleBean(StoreMetrics.class)
                        .doesNotHaveBean(PrometheusMeterRegistry.class).doesNotHaveBean(OperatorAccounts.class));
    }
}

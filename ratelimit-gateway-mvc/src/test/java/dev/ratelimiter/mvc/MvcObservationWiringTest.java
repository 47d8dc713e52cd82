package dev.ratelimiter.mvc;

import java.util.List;
import java.util.Map;

import dev.ratelimiter.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimiter.autoconfigure.RateLimitObservationAutoConfiguration;
import dev.ratelimiter.autoconfigure.mvc.RateLimitMvcAutoConfiguration;
import dev.ratelimiter.gateway.DecisionObservationContext;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.servlet.function.ServerRequest;

import static org.assertj.core.api.Assertions.assertThat;

/** The Server MVC limiter made by the auto-configuration observes its decisions, unless switched off. */
class MvcObservationWiringTest {

    private final TestObservationRegistry registry = TestObservationRegistry.create();

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                    RateLimitMvcAutoConfiguration.class, RateLimitObservationAutoConfiguration.class))
            .withBean(ObservationRegistry.class, () -> registry)
            .withPropertyValues("ratelimit.store.type=memory", "ratelimit.default-tier=free",
                    "ratelimit.api-key.unknown.policy=default-tier", "ratelimit.tiers.free.limits.default.capacity=5",
                    "ratelimit.tiers.free.limits.default.refill-tokens=1",
                    "ratelimit.tiers.free.limits.default.refill-period=1h");

    @Test
    void theLimitersDecisionsAreObservedUnderTheRequestThreadsObservation() {
        runner.run(context -> {
            Observation request = Observation.start("http.server.requests", registry);
            try (Observation.Scope scope = request.openScope()) {
                assertThat(decide(context.getBean(MvcRateLimiter.class))).isNull();
            }
            request.stop();
            TestObservationRegistryAssert.assertThat(registry).hasHandledContextsThatSatisfy(contexts -> assertThat(
                    contexts.stream().filter(DecisionObservationContext.class::isInstance).toList())
                    .singleElement().satisfies(decision -> {
                        assertThat(decision.getName()).isEqualTo("ratelimit.decision");
                        assertThat(decision.getParentObservation()).isSameAs(request);
                        assertThat(decision.getLowCardinalityKeyValue("ratelimit.outcome").getValue())
                                .isEqualTo("allowed");
                        assertThat(decision.getLowCardinalityKeyValue("ratelimit.source").getValue())
                                .isEqualTo("local");
                    }));
        });
    }

    @Test
    void switchedOffTheLimiterDecidesUnobserved() {
        runner.withPropertyValues("ratelimit.observations.enabled=false").run(context -> {
            assertThat(decide(context.getBean(MvcRateLimiter.class))).isNull();
            TestObservationRegistryAssert.assertThat(registry).doesNotHaveAnyObservation();
        });
    }

    private static Object decide(MvcRateLimiter limiter) {
        MockHttpServletRequest servlet = new MockHttpServletRequest("GET", "/api/x");
        servlet.addHeader("X-API-Key", "mvc-wired-client");
        LimitedRequest limited = new LimitedRequest(servlet, new MockHttpServletResponse());
        return limiter.decide(ServerRequest.create(limited, List.of()), "api", Map.of(), limited);
    }
}

package dev.ratelimiter.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimiter.core.RuleAdmin;
import dev.ratelimiter.gateway.webflux.RateLimitFilter;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.testsupport.RedisServerExtension;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableReactiveWebApplicationContext;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The observations' timers stay as bounded as the limiter's own meters: with Spring Boot's meter handler each value of
 * {@code ratelimit.rule.group} is a timer series, and a runtime rule posted without a group (each customer override)
 * is a group of its own. Found by the issue-34 review: 20 overrides left 20 series behind.
 */
class DecisionObservationMetersTest {

    @RegisterExtension
    static final RedisServerExtension redis = RedisServerExtension.shared();

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                    DataRedisReactiveAutoConfiguration.class, RateLimitRedisAutoConfiguration.class,
                    RateLimitAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class,
                    RateLimitObservationAutoConfiguration.class))
            .withBean(ObservationRegistry.class, () -> {
                ObservationRegistry registry = ObservationRegistry.create();
                registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
                return registry;
            })
            .withPropertyValues("ratelimit.store.type=redis", "ratelimit.store.timeout=2s",
                    "ratelimit.default-tier=free", "ratelimit.api-key.unknown.policy=default-tier",
                    "ratelimit.tiers.free.limits.default.capacity=20",
                    "ratelimit.tiers.free.limits.default.refill-tokens=1",
                    "ratelimit.tiers.free.limits.default.refill-period=1h");

    /** Overrides posted without a group (the API's default: group = id) and then deleted. */
    @Test
    void overridesPostedWithoutAGroupAreOneSeriesNotOneEach() {
        runner.withPropertyValues("spring.data.redis.url=" + redis.url()).run(context -> {
            awaitConnected(context);
            RuleAdmin admin = context.getBean(RuleAdmin.class);
            decide(context, "configured-caller");
            int before = meters.getMeters().size();
            for (int i = 0; i < 20; i++) {
                Map<String, Object> spec = new LinkedHashMap<>();
                spec.put("match.api-keys", List.of("customer-" + i + "-key"));
                spec.put("capacity", 2);
                spec.put("refill-tokens", 1);
                spec.put("refill-period", "1h");
                assertThat(admin.put("customer-" + i, spec).isApplied()).isTrue();
                decide(context, "customer-" + i + "-key");
            }
            for (int i = 0; i < 20; i++) {
                assertThat(admin.delete("customer-" + i).isApplied()).isTrue();
            }
            Set<String> groups = new TreeSet<>();
            for (Meter meter : meters.getMeters()) {
                String group = meter.getId().getTag("ratelimit.rule.group");
                if (group != null) {
                    groups.add(meter.getId().getName() + ":" + group);
                }
            }
            assertThat(groups).as("the rule groups the observations' meters are tagged with")
                    .allSatisfy(value -> assertThat(value).doesNotContain("customer-"))
                    .contains("ratelimit.decision:runtime", "ratelimit.decision:tier-default");
            // the one "runtime" series (a timer) is all 20 overrides added
            assertThat(meters.getMeters()).as("meters after 20 overrides came and went").hasSize(before + 1);
        });
    }

    private static void decide(AssertableReactiveWebApplicationContext context, String apiKey) {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/x")
                .header("X-API-Key", apiKey));
        context.getBean(RateLimitFilter.class).filter(exchange, served -> Mono.empty()).block(Duration.ofSeconds(10));
    }

    private static void awaitConnected(AssertableReactiveWebApplicationContext context) {
        LimiterConnection connection = context.getBean(LimiterConnection.class);
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!connection.connected() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
        assertThat(connection.connected()).isTrue();
    }
}

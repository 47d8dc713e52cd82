package dev.ratelimiter.autoconfigure;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.gateway.DecisionObservationContext;
import dev.ratelimiter.gateway.DecisionObservationConvention;
import dev.ratelimiter.gateway.DecisionObservations;
import dev.ratelimiter.gateway.DefaultDecisionObservationConvention;
import dev.ratelimiter.gateway.StoreObservationContext;
import dev.ratelimiter.gateway.StoreObservations;
import dev.ratelimiter.gateway.webflux.RateLimitFilter;
import dev.ratelimiter.redis.LimiterConnection;
import dev.ratelimiter.testsupport.RedisServerExtension;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableReactiveWebApplicationContext;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The observations wired: on where the application has an {@link ObservationRegistry}, off without one or when
 * switched off; and what they say of an allowed, a refused and a fallback decision, against a real Redis (and one
 * that is not there), through the real filter, under a request observation as Spring WebFlux makes one.
 */
class RateLimitObservationAutoConfigurationTest {

    @RegisterExtension
    static final RedisServerExtension redis = RedisServerExtension.shared();

    private final TestObservationRegistry registry = TestObservationRegistry.create();

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                    DataRedisReactiveAutoConfiguration.class, RateLimitRedisAutoConfiguration.class,
                    RateLimitAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class,
                    RateLimitObservationAutoConfiguration.class))
            .withPropertyValues("ratelimit.store.type=redis", "ratelimit.store.timeout=2s",
                    "ratelimit.default-tier=free", "ratelimit.api-key.unknown.policy=default-tier",
                    "ratelimit.tiers.free.limits.default.capacity=1",
                    "ratelimit.tiers.free.limits.default.refill-tokens=1",
                    "ratelimit.tiers.free.limits.default.refill-period=1h");

    @Test
    void withARegistryDecisionsAndStoreCallsAreObserved() {
        runner.withBean(ObservationRegistry.class, () -> registry)
                .withPropertyValues("spring.data.redis.url=" + redis.url()).run(context -> {
                    assertThat(context).hasSingleBean(DecisionObservations.class).hasSingleBean(StoreObservations.class);
                    assertThat(context.getBean(DecisionObservations.class).enabled()).isTrue();
                });
    }

    @Test
    void switchedOffNothingIsObserved() {
        runner.withBean(ObservationRegistry.class, () -> registry)
                .withPropertyValues("spring.data.redis.url=" + redis.url(), "ratelimit.observations.enabled=false")
                .run(context -> {
                    assertThat(context).doesNotHaveBean(DecisionObservations.class)
                            .doesNotHaveBean(StoreObservations.class);
                    awaitConnected(context);
                    decide(context, "client-one", null);
                    TestObservationRegistryAssert.assertThat(registry).doesNotHaveAnyObservation();
                });
    }

    @Test
    void withoutARegistryThereIsNothingToObserveAndTheFilterStillDecides() {
        runner.withPropertyValues("spring.data.redis.url=" + redis.url()).run(context -> {
            assertThat(context).doesNotHaveBean(DecisionObservations.class).doesNotHaveBean(StoreObservations.class);
            awaitConnected(context);
            assertThat(decide(context, "client-one", null)).isNull();
        });
    }

    @Test
    void aUserConventionReplacesTheDefault() {
        runner.withBean(ObservationRegistry.class, () -> registry)
                .withBean(DecisionObservationConvention.class, Renamed::new)
                .withPropertyValues("spring.data.redis.url=" + redis.url()).run(context -> {
                    awaitConnected(context);
                    decide(context, "client-one", null);
                    TestObservationRegistryAssert.assertThat(registry)
                            .hasObservationWithNameEqualTo("gateway.ratelimit");
                });
    }

    /** Without a secret the client id is a plain SHA-256 of the key: a guessable key would be found from a trace. */
    @Test
    void withoutAClientIdSecretATraceCarriesNoHashOfTheKey() {
        runner.withBean(ObservationRegistry.class, () -> registry)
                .withPropertyValues("spring.data.redis.url=" + redis.url()).run(context -> {
                    awaitConnected(context);
                    decide(context, "guessable-key", null);
                    List<DecisionObservationContext> decisions = handled(DecisionObservationContext.class);
                    assertThat(decisions).hasSize(1);
                    assertThat(decisions.get(0).getHighCardinalityKeyValues())
                            .containsExactly(KeyValue.of("ratelimit.client.id", "unkeyed"));
                });
    }

    @Test
    void anAllowedAndARefusedDecisionAreChildrenOfTheRequestAndParentsOfTheirStoreCall() {
        runner.withBean(ObservationRegistry.class, () -> registry)
                .withPropertyValues("spring.data.redis.url=" + redis.url(),
                        "ratelimit.client-id.secret=observation-test-secret-0123456789").run(context -> {
                    awaitConnected(context);
                    Observation request = Observation.start("http.server.requests", registry);
                    assertThat(decide(context, "observed-client", request)).as("first: allowed").isNull();
                    assertThat(decide(context, "observed-client", request)).as("second: refused")
                            .isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
                    request.stop();

                    List<DecisionObservationContext> decisions = handled(DecisionObservationContext.class);
                    assertThat(decisions).hasSize(2);
                    String client = context.getBean(ClientIdKeyring.class).current().of("observed-client");
                    assertThat(keys(decisions.get(0))).contains(KeyValue.of("ratelimit.outcome", "allowed"),
                            KeyValue.of("ratelimit.refusal", "none"), KeyValue.of("ratelimit.rule.group", "tier-default"),
                            KeyValue.of("ratelimit.tier", "free"), KeyValue.of("ratelimit.route.class", "default"),
                            KeyValue.of("ratelimit.store.mode", "exact"), KeyValue.of("ratelimit.source", "store"),
                            KeyValue.of("ratelimit.fallback.reason", "none"));
                    assertThat(keys(decisions.get(1))).contains(KeyValue.of("ratelimit.outcome", "refused"),
                            KeyValue.of("ratelimit.refusal", "rate_limited"), KeyValue.of("ratelimit.source", "store"));
                    for (DecisionObservationContext decision : decisions) {
                        assertThat(decision.getName()).isEqualTo("ratelimit.decision");
                        assertThat(decision.getHighCardinalityKeyValues()).as("the hashed client id, never the key")
                                .containsExactly(KeyValue.of("ratelimit.client.id", client))
                                .noneMatch(key -> key.getValue().contains("observed-client"));
                        assertThat(decision.getParentObservation()).as("the request's observation is the parent")
                                .isSameAs(request);
                    }

                    List<StoreObservationContext> calls = handled(StoreObservationContext.class);
                    assertThat(calls).as("one store call per decision").hasSize(2);
                    for (int i = 0; i < 2; i++) {
                        assertThat(calls.get(i).getName()).isEqualTo("ratelimit.store");
                        assertThat(calls.get(i).getLowCardinalityKeyValue("ratelimit.store.outcome").getValue())
                                .isEqualTo("answered");
                        assertThat(calls.get(i).getParentObservation().getContextView())
                                .as("the store call is its decision's child").isSameAs(decisions.get(i));
                    }
                });
    }

    @Test
    void aFallbackDecisionSaysWhyTheStoreDidNotDecide() throws IOException {
        runner.withBean(ObservationRegistry.class, () -> registry)
                .withPropertyValues("spring.data.redis.url=redis://127.0.0.1:" + closedPort(),
                        "ratelimit.tiers.free.limits.default.failure-mode=open")
                .run(context -> {
                    assertThat(decide(context, "client-one", null)).as("open: let through").isNull();
                    DecisionObservationContext decision = handled(DecisionObservationContext.class).get(0);
                    assertThat(keys(decision)).contains(KeyValue.of("ratelimit.outcome", "allowed"),
                            KeyValue.of("ratelimit.source", "fallback"),
                            KeyValue.of("ratelimit.fallback.reason", "not-connected"));
                    List<StoreObservationContext> calls = handled(StoreObservationContext.class);
                    assertThat(calls).hasSize(1);
                    assertThat(calls.get(0).getLowCardinalityKeyValue("ratelimit.store.outcome").getValue())
                            .isEqualTo("error");
                    assertThat(calls.get(0).getError()).isNotNull();
                });
    }

    /** Runs the filter as Spring WebFlux would, {@code parent} in the Reactor context; the refusal's status, or null. */
    private static HttpStatus decide(AssertableReactiveWebApplicationContext context, String apiKey,
            Observation parent) {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/x")
                .header("X-API-Key", apiKey));
        Mono<Void> filtered = context.getBean(RateLimitFilter.class).filter(exchange, served -> Mono.empty());
        (parent == null ? filtered : filtered.contextWrite(reactor -> reactor.put(ObservationThreadLocalAccessor.KEY,
                parent))).block(Duration.ofSeconds(10));
        return exchange.getResponse().getStatusCode() == null ? null
                : HttpStatus.valueOf(exchange.getResponse().getStatusCode().value());
    }

    private <T extends Observation.Context> List<T> handled(Class<T> type) {
        List<T> found = new ArrayList<>();
        TestObservationRegistryAssert.assertThat(registry).hasHandledContextsThatSatisfy(contexts -> contexts
                .stream().filter(type::isInstance).map(type::cast).forEach(found::add));
        return found;
    }

    private static List<KeyValue> keys(Observation.Context context) {
        List<KeyValue> keys = new ArrayList<>();
        context.getLowCardinalityKeyValues().forEach(keys::add);
        return keys;
    }

    /** Bounded: the limiter connects in the background; before, a decision would fall back. */
    private static void awaitConnected(AssertableReactiveWebApplicationContext context) {
        LimiterConnection connection = context.getBean(LimiterConnection.class);
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!connection.connected() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
        assertThat(connection.connected()).as("the limiter connected to Redis").isTrue();
    }

    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
    }

    /** An application's convention: the default's keys under its own name. */
    static final class Renamed extends DefaultDecisionObservationConvention {

        Renamed() {
            super(ClientIdKeyring.unkeyed(), Rule::group);
        }

        @Override
        public String getName() {
            return "gateway.ratelimit";
        }
    }
}

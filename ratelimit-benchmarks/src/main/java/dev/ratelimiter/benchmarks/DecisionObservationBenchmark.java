package dev.ratelimiter.benchmarks;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.ClientAddressResolver;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.AdmissionRequest;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.CallerIdentity;
import dev.ratelimiter.gateway.Decision;
import dev.ratelimiter.gateway.DecisionObservations;
import dev.ratelimiter.gateway.DefaultDecisionObservationConvention;
import dev.ratelimiter.gateway.IdentityValuePolicy;
import dev.ratelimiter.gateway.RefusalAnswer;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.gateway.StoreObservations;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;

/**
 * What observing a decision costs: one whole decision through the admission pipeline (decide, the store's verdict,
 * judge) on an in-memory store, so that only the limiter's own work is measured, with
 * <ul>
 * <li>{@code none}: no registry (the gateway without Micrometer's observation, or {@code
 * ratelimit.observations.enabled=false});</li>
 * <li>{@code noop}: {@link ObservationRegistry#NOOP}, or a registry without handlers: asked once, nothing made;</li>
 * <li>{@code handler}: a registry with a handler that does nothing: the observations' own cost (two contexts, their
 * keys, the hashed client id);</li>
 * <li>{@code meters}: Micrometer's meter handler on a simple registry, what Spring Boot's actuator registers: a
 * timer per observation.</li>
 * </ul>
 * Run with {@code -prof gc} for the allocation per decision.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DecisionObservationBenchmark {

    private static final int CLIENTS = 1_000;

    @Param({ "none", "noop", "handler", "meters" })
    public String registry;

    private Admission admission;
    private RuleSet rules;
    private List<CallerIdentity> callers;
    private final AdmissionRequest request = new AdmissionRequest("/api/orders", "api", Map.of(), () -> null);
    private int next;

    @Setup(Level.Trial)
    public void start() {
        ObservationRegistry observations = registry();
        // Limits far above what a benchmark iteration spends: the path measured is the allowed one.
        rules = RuleSet.builder("free").rule(new Rule("per-key", "per-key", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("b.", 1_000_000_000L, 1_000_000_000L, Duration.ofSeconds(1)), 0,
                dev.ratelimiter.core.Mode.ENFORCE, FailureMode.OPEN)).build();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules,
                new StoreObservations(observations, null).observe(new LocalBucketStore(CLIENTS * 2L)),
                ClientIds.unkeyed());
        RequestIdentity identity = new RequestIdentity("X-API-Key", "X-User", "X-Tenant",
                new ClientAddressResolver(List.of(), 32, 64));
        DecisionObservations decisions = registry.equals("none") ? DecisionObservations.OFF
                : new DecisionObservations(observations, null,
                        new DefaultDecisionObservationConvention(ClientIdKeyring.unkeyed(), Rule::group));
        admission = new Admission(evaluator, identity, new ApiKeyRefusals(false, HttpStatusCode.valueOf(401),
                HttpStatusCode.valueOf(401)), ApiKeyFormat.ANY, IdentityValuePolicy.ANY, IdentityValuePolicy.ANY,
                VerdictListener.NONE, Clock.systemUTC(), decisions);
        callers = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            HttpHeaders headers = new HttpHeaders();
            headers.set("X-API-Key", "client-key-" + i);
            callers.add(identity.caller(headers));
        }
    }

    private ObservationRegistry registry() {
        switch (registry) {
            case "none", "noop":
                return ObservationRegistry.NOOP;
            case "handler":
                ObservationRegistry withHandler = ObservationRegistry.create();
                withHandler.observationConfig().observationHandler(new DoesNothing());
                return withHandler;
            case "meters":
                ObservationRegistry withMeters = ObservationRegistry.create();
                withMeters.observationConfig().observationHandler(
                        new DefaultMeterObservationHandler(new SimpleMeterRegistry()));
                return withMeters;
            default:
                throw new IllegalArgumentException("registry: none, noop, handler or meters, not " + registry);
        }
    }

    @Benchmark
    public RefusalAnswer decision() {
        next = (next + 1) % CLIENTS;
        Decision decision = admission.decide(rules, callers.get(next), request, new RequestPermits());
        Verdict verdict = decision.verdict().block();
        return decision.judge(verdict, new HttpHeaders());
    }

    private static final class DoesNothing implements ObservationHandler<Observation.Context> {

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }
}

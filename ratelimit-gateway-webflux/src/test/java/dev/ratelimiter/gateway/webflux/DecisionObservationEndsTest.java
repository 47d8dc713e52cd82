package dev.ratelimiter.gateway.webflux;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.ClientAddressResolver;
import dev.ratelimiter.core.ClientIdKeyring;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.DecisionObservationContext;
import dev.ratelimiter.gateway.DecisionObservations;
import dev.ratelimiter.gateway.DefaultDecisionObservationConvention;
import dev.ratelimiter.gateway.IdentityValuePolicy;
import dev.ratelimiter.gateway.RequestIdentity;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatusCode;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The decision observation's two unhappy ends on WebFlux: the client leaves before the verdict (cancelled), and the
 * judging throws (stopped once, with the error). Found by the issue-34 review.
 */
class DecisionObservationEndsTest {

    private final Map<Observation.Context, String> state = new ConcurrentHashMap<>();

    private ObservationRegistry registry() {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStart(Observation.Context context) {
                state.put(context, "started");
            }

            @Override
            public void onStop(Observation.Context context) {
                state.put(context, "stopped:" + context.getLowCardinalityKeyValue("ratelimit.outcome").getValue()
                        + ":error=" + (context.getError() != null));
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return context instanceof DecisionObservationContext;
            }
        });
        return registry;
    }

    private RateLimitFilter filter(RateLimitStore store, VerdictListener listener) {
        Rule rule = new Rule("login", "login", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("login.", 5, 1, Duration.ofSeconds(1)), 0, Mode.ENFORCE, FailureMode.OPEN);
        RuleSet rules = RuleSet.builder("free").rule(rule).build();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, store, ClientIds.unkeyed());
        RequestIdentity identity = new RequestIdentity("X-Key", "X-User", "X-Tenant",
                new ClientAddressResolver(List.of(), 32, 64));
        return new RateLimitFilter(evaluator, identity, new HeaderIdentityResolver(identity),
                new ApiKeyRefusals(false, HttpStatusCode.valueOf(401), HttpStatusCode.valueOf(401)), ApiKeyFormat.ANY,
                IdentityValuePolicy.ANY, IdentityValuePolicy.ANY, listener, Clock.systemUTC(), 0,
                RefusalWriter.defaults(), new DecisionObservations(registry(), null,
                        new DefaultDecisionObservationConvention(ClientIdKeyring.unkeyed(), Rule::group)));
    }

    private static MockServerWebExchange exchange() {
        return MockServerWebExchange.from(MockServerHttpRequest.get("/api/x").header("X-Key", "k1"));
    }

    @Test
    void aClientThatLeavesBeforeTheVerdictEndsTheObservationAsCancelled() throws Exception {
        RateLimitFilter filter = filter(checks -> Mono.never(), VerdictListener.NONE);
        Disposable running = filter.filter(exchange(), served -> Mono.empty()).subscribe();
        // until the decision is under way (asking a store that never answers): bounded, not timed
        for (int i = 0; i < 1_000 && !state.containsValue("started"); i++) {
            Thread.sleep(10);
        }
        assertThat(state.values()).containsExactly("started");
        running.dispose();
        assertThat(state.values()).containsExactly("stopped:cancelled:error=false");
    }

    @Test
    void aListenerThatThrowsEndsTheObservationWithItsError() {
        VerdictListener failing = new VerdictListener() {
            @Override
            public void onVerdict(RequestAttributes request, Verdict verdict) {
                throw new IllegalStateException("listener bug");
            }
        };
        RateLimitFilter filter = filter(new LocalBucketStore(100), failing);
        try {
            filter.filter(exchange(), served -> Mono.empty()).block(Duration.ofSeconds(5));
        }
        catch (RuntimeException expected) {
            // the failure reaches the server
        }
        assertThat(state.values()).as("stopped once, and says why").containsExactly("stopped:none:error=true");
    }
}

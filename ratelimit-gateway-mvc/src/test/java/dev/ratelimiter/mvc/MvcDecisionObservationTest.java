package dev.ratelimiter.mvc;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.DecisionObservationContext;
import dev.ratelimiter.gateway.DecisionObservations;
import dev.ratelimiter.gateway.DefaultDecisionObservationConvention;
import dev.ratelimiter.gateway.IdentityValuePolicy;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.gateway.RequestIdentity;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatusCode;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.servlet.function.ServerRequest;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On Server MVC the decision's observation finds its parent on the request thread (the servlet observation filter's
 * scope), with no parent handed to it; and a decision the thread stopped waiting for says {@code undecided}.
 */
class MvcDecisionObservationTest {

    private static final RequestIdentity IDENTITY = new RequestIdentity("X-API-Key", "X-User", "X-Tenant",
            new ClientAddressResolver(List.of(), 32, 64));

    private final TestObservationRegistry registry = TestObservationRegistry.create();

    @Test
    void theDecisionIsAChildOfTheRequestThreadsObservationAllowedThenRefused() {
        MvcRateLimiter limiter = limiter(new LocalBucketStore(100), Duration.ofSeconds(2));
        Observation request = Observation.start("http.server.requests", registry);
        try (Observation.Scope scope = request.openScope()) {
            assertThat(decide(limiter)).as("first: allowed").isNull();
            assertThat(decide(limiter)).as("second: refused").isNotNull()
                    .extracting(rendered -> rendered.status().value()).isEqualTo(429);
        }
        request.stop();

        List<DecisionObservationContext> decisions = decisions();
        assertThat(decisions).extracting(decision -> decision.getLowCardinalityKeyValue("ratelimit.outcome")
                .getValue()).containsExactly("allowed", "refused");
        assertThat(decisions).allSatisfy(decision -> {
            assertThat(decision.getParentObservation()).isSameAs(request);
            assertThat(decision.getLowCardinalityKeyValue("ratelimit.source").getValue()).isEqualTo("local");
        });
    }

    @Test
    void aDecisionTheThreadStoppedWaitingForIsUndecided() {
        RateLimitStore silent = checks -> Mono.never();
        assertThat(decide(limiter(silent, Duration.ofMillis(20)))).as("open: let through").isNull();
        assertThat(decisions()).singleElement().satisfies(decision -> {
            assertThat(decision.getLowCardinalityKeyValue("ratelimit.outcome").getValue()).isEqualTo("undecided");
            assertThat(decision.getParentObservation()).as("no request observation, no parent").isNull();
        });
    }

    private MvcRateLimiter limiter(RateLimitStore store, Duration waitBound) {
        RuleSet rules = RuleSet.builder("free").rule(new Rule("login", "login", Match.ANY,
                List.of(Dimension.API_KEY), TokenBucketLimit.of("login.", 1, 1, Duration.ofHours(1)), 0,
                Mode.ENFORCE, FailureMode.OPEN)).build();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, store, ClientIds.unkeyed());
        Admission admission = new Admission(evaluator, IDENTITY, new ApiKeyRefusals(false,
                HttpStatusCode.valueOf(401), HttpStatusCode.valueOf(401)), ApiKeyFormat.ANY, IdentityValuePolicy.ANY,
                IdentityValuePolicy.ANY, VerdictListener.NONE, Clock.systemUTC(), new DecisionObservations(registry,
                        null, new DefaultDecisionObservationConvention(ClientIdKeyring.unkeyed(), Rule::group)));
        return new MvcRateLimiter(evaluator, IDENTITY, admission, waitBound, route -> Map.of(),
                RefusalRenderer.defaults());
    }

    private static RefusalRenderer.Rendered decide(MvcRateLimiter limiter) {
        MockHttpServletRequest servlet = new MockHttpServletRequest("GET", "/api/x");
        servlet.addHeader("X-API-Key", "mvc-observed-client");
        LimitedRequest limited = new LimitedRequest(servlet, new MockHttpServletResponse());
        return limiter.decide(ServerRequest.create(limited, List.of()), "api", Map.of(), limited);
    }

    private List<DecisionObservationContext> decisions() {
        List<DecisionObservationContext> found = new ArrayList<>();
        TestObservationRegistryAssert.assertThat(registry).hasHandledContextsThatSatisfy(contexts -> contexts
                .stream().filter(DecisionObservationContext.class::isInstance)
                .map(DecisionObservationContext.class::cast).forEach(found::add));
        return found;
    }
}

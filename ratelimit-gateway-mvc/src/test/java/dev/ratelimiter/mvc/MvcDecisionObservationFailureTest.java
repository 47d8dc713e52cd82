package dev.ratelimiter.mvc;

import java.time.Clock;
import java.time.Duration;
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
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.DecisionObservations;
import dev.ratelimiter.gateway.DefaultDecisionObservationConvention;
import dev.ratelimiter.gateway.IdentityValuePolicy;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.gateway.RequestIdentity;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatusCode;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.servlet.function.ServerRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A decision whose judging throws (an application's verdict listener) still stops its observation: otherwise each
 * such request stays in {@code ratelimit.decision.active} and an open span for the life of the process. Found by the
 * issue-34 review.
 */
class MvcDecisionObservationFailureTest {

    private static final RequestIdentity IDENTITY = new RequestIdentity("X-API-Key", "X-User", "X-Tenant",
            new ClientAddressResolver(List.of(), 32, 64));

    @Test
    void aVerdictListenerThatThrowsStopsTheDecisionObservation() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        VerdictListener failing = new VerdictListener() {
            @Override
            public void onVerdict(RequestAttributes request, Verdict verdict) {
                throw new IllegalStateException("an application's listener fails");
            }
        };
        RuleSet rules = RuleSet.builder("free").rule(new Rule("login", "login", Match.ANY,
                List.of(Dimension.API_KEY), TokenBucketLimit.of("login.", 1, 1, Duration.ofHours(1)), 0,
                Mode.ENFORCE, FailureMode.OPEN)).build();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, new LocalBucketStore(100), ClientIds.unkeyed());
        Admission admission = new Admission(evaluator, IDENTITY, new ApiKeyRefusals(false,
                HttpStatusCode.valueOf(401), HttpStatusCode.valueOf(401)), ApiKeyFormat.ANY, IdentityValuePolicy.ANY,
                IdentityValuePolicy.ANY, failing, Clock.systemUTC(), new DecisionObservations(registry, null,
                        new DefaultDecisionObservationConvention(ClientIdKeyring.unkeyed(), Rule::group)));
        MvcRateLimiter limiter = new MvcRateLimiter(evaluator, IDENTITY, admission, Duration.ofSeconds(2),
                route -> Map.of(), RefusalRenderer.defaults());
        for (int i = 0; i < 3; i++) {
            MockHttpServletRequest servlet = new MockHttpServletRequest("GET", "/api/x");
            servlet.addHeader("X-API-Key", "client-" + i);
            LimitedRequest limited = new LimitedRequest(servlet, new MockHttpServletResponse());
            assertThatThrownBy(() -> limiter.decide(ServerRequest.create(limited, List.of()), "api", Map.of(), limited))
                    .isInstanceOf(IllegalStateException.class);
        }
        assertThat(meters.get("ratelimit.decision.active").longTaskTimer().activeTasks())
                .as("decision observations still running after their requests failed").isZero();
        assertThat(meters.get("ratelimit.decision").tag("error", "IllegalStateException").timer().count())
                .as("each failed decision stopped with its error").isEqualTo(3);
    }
}

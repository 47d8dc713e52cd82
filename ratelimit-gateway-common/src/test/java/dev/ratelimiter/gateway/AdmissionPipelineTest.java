package dev.ratelimiter.gateway;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.ClientAddressResolver;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.LocalBucketStore;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.RequestPermits;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.VerdictListener;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The admission pipeline both flavours decide through, without any web stack: what is refused before the store is
 * asked, that the store is asked lazily and once, what a failing store becomes, and what a verdict writes.
 */
class AdmissionPipelineTest {

    private static final RequestIdentity HEADERS = new RequestIdentity("X-Key", "X-User", "X-Tenant",
            new ClientAddressResolver(List.of(), 32, 64));

    private final List<RequestAttributes> reported = new ArrayList<>();

    @Test
    void aMissingKeyIsRefusedUpFrontAndTheStoreIsNeverAsked() {
        AtomicInteger asked = new AtomicInteger();
        Admission admission = admission(rules(FailureMode.OPEN), counting(asked, new LocalBucketStore(100)), true);
        Decision decision = admission.decide(rules(FailureMode.OPEN), CallerIdentity.NONE, request("/api/x"),
                new RequestPermits());
        assertThat(decision.refusal()).isNotNull();
        assertThat(decision.refusal().status()).isEqualTo(HttpStatus.UNAUTHORIZED);
        assertThat(decision.request()).isNull();
        assertThat(asked).hasValue(0);
    }

    @Test
    void anAmbiguousPathIsRefusedUpFrontWhenARuleMatchesByPath() {
        RuleSet rules = RuleSet.builder("free").rule(new Rule("login", "login", new Match(Set.of(), List.of("/login/**"), Set.of(), Set.of(), Set.of()),
                List.of(Dimension.API_KEY), TokenBucketLimit.of("login.", 5, 1, Duration.ofSeconds(1)), 0,
                Mode.ENFORCE, FailureMode.OPEN)).build();
        Decision decision = admission(rules, new LocalBucketStore(100), false).decide(rules, caller("k1"),
                request("/api/..;/login/x"), new RequestPermits());
        assertThat(decision.refusal()).isNotNull();
        assertThat(decision.refusal().status()).isEqualTo(HttpStatus.BAD_REQUEST);
    }

    @Test
    void theStoreIsAskedOnlyWhenTheVerdictIsSubscribedAndTheRequestIsAsTheRulesSeeIt() {
        AtomicInteger asked = new AtomicInteger();
        RuleSet rules = rules(FailureMode.OPEN);
        Admission admission = admission(rules, counting(asked, new LocalBucketStore(100)), false);
        Decision decision = admission.decide(rules, caller("k1"),
                new AdmissionRequest("/API/x/", "api", Map.of("ratelimit-cost", 2), () -> "198.51.100.7"),
                new RequestPermits());
        assertThat(decision.refusal()).isNull();
        assertThat(asked).as("nothing asked before the flavour waits").hasValue(0);
        RequestAttributes request = decision.request();
        assertThat(request.routeId()).isEqualTo("api");
        assertThat(request.cost()).isEqualTo(2);
        assertThat(request.tier()).isEqualTo("free");
        Verdict verdict = decision.verdict().block(Duration.ofSeconds(5));
        assertThat(asked).hasValue(1);
        assertThat(verdict.allowed()).isTrue();
        HttpHeaders fields = new HttpHeaders();
        assertThat(decision.judge(verdict, fields)).isNull();
        assertThat(fields.getFirst("RateLimit-Policy")).contains("\"login\"");
        assertThat(reported).containsExactly(request);
    }

    @Test
    void aStoreThatFailsIsDecidedByTheRulesFailureModes() {
        RateLimitStore broken = checks -> Mono.error(new IllegalStateException("a bug in the store adapter"));
        RateLimitStore throwing = checks -> {
            throw new IllegalStateException("a bug, thrown while called");
        };
        for (RateLimitStore store : List.of(broken, throwing)) {
            RuleSet closed = rules(FailureMode.CLOSED);
            Decision refused = admission(closed, store, false).decide(closed, caller("k1"), request("/api/x"),
                    new RequestPermits());
            Verdict failClosed = refused.verdict().block(Duration.ofSeconds(5));
            assertThat(failClosed.reason()).isEqualTo(Verdict.Reason.STORE_UNAVAILABLE);
            assertThat(refused.judge(failClosed, new HttpHeaders()).status())
                    .isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);

            RuleSet open = rules(FailureMode.OPEN);
            Decision admitted = admission(open, store, false).decide(open, caller("k1"), request("/api/x"),
                    new RequestPermits());
            Verdict failOpen = admitted.verdict().block(Duration.ofSeconds(5));
            assertThat(failOpen.allowed()).isTrue();
            assertThat(admitted.judge(failOpen, new HttpHeaders())).isNull();
        }
    }

    @Test
    void theUndecidedVerdictIsTheRulesFailureModesWithoutTheStore() {
        AtomicInteger asked = new AtomicInteger();
        RuleSet closed = rules(FailureMode.CLOSED);
        Decision decision = admission(closed, counting(asked, new LocalBucketStore(100)), false).decide(closed,
                caller("k1"), request("/api/x"), new RequestPermits());
        assertThat(decision.undecided().reason()).isEqualTo(Verdict.Reason.STORE_UNAVAILABLE);
        assertThat(asked).hasValue(0);
    }

    @Test
    void overTheLimitIsA429WithRetryAfter() {
        RuleSet rules = rules(FailureMode.OPEN);
        Admission admission = admission(rules, new LocalBucketStore(100), false);
        RefusalAnswer last = null;
        for (int i = 0; i < 6; i++) {
            Decision decision = admission.decide(rules, caller("k1"), request("/api/x"), new RequestPermits());
            last = decision.judge(decision.verdict().block(Duration.ofSeconds(5)), new HttpHeaders());
        }
        assertThat(last).as("the sixth of a burst of 5").isNotNull();
        assertThat(last.status()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
        assertThat(last.retryAfterSeconds()).isPositive();
    }

    private Admission admission(RuleSet rules, RateLimitStore store, boolean rejectMissing) {
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, store, ClientIds.unkeyed());
        VerdictListener listener = (request, verdict) -> reported.add(request);
        return new Admission(evaluator, HEADERS, new ApiKeyRefusals(rejectMissing, HttpStatusCode.valueOf(401),
                HttpStatusCode.valueOf(401)), ApiKeyFormat.ANY, listener, Clock.systemUTC());
    }

    private static RateLimitStore counting(AtomicInteger asked, RateLimitStore store) {
        return checks -> {
            asked.incrementAndGet();
            return store.evaluate(checks);
        };
    }

    private static RuleSet rules(FailureMode failureMode) {
        return RuleSet.builder("free").rule(new Rule("login", "login", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("login.", 5, 1, Duration.ofHours(1)), 0, Mode.ENFORCE, failureMode)).build();
    }

    private static CallerIdentity caller(String apiKey) {
        HttpHeaders headers = new HttpHeaders();
        headers.set("X-Key", apiKey);
        return HEADERS.caller(headers);
    }

    private static AdmissionRequest request(String path) {
        return new AdmissionRequest(path, "api", Map.of(), () -> null);
    }
}

package dev.ratelimiter.gateway;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.core.ClientAddressResolver;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.VerdictListener;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A decision that fails inside the limiter (a bug: store failures are already answered by the failure modes) is
 * decided by the rules' failure modes: a fail-closed rule still refuses with 503, an open one lets the request on.
 * Before, every such request went through, fail-closed rules included.
 */
class FailedDecisionTest {

    @Test
    void aFailClosedRuleRefusesWith503WhenTheDecisionFails() {
        AtomicInteger passed = new AtomicInteger();
        MockServerWebExchange exchange = exchange();
        filter(FailureMode.CLOSED).filter(exchange, served -> {
            passed.incrementAndGet();
            return Mono.empty();
        }).block(Duration.ofSeconds(5));
        assertThat(passed).as("the request never reached the chain").hasValue(0);
        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(5)))
                .contains("limiter_unavailable");
    }

    @Test
    void anOpenRuleLetsTheRequestOnWhenTheDecisionFails() {
        AtomicInteger passed = new AtomicInteger();
        filter(FailureMode.OPEN).filter(exchange(), served -> {
            passed.incrementAndGet();
            return Mono.empty();
        }).block(Duration.ofSeconds(5));
        assertThat(passed).hasValue(1);
    }

    private static MockServerWebExchange exchange() {
        return MockServerWebExchange.from(MockServerHttpRequest.get("/api/x").header("X-Key", "k1"));
    }

    private static RateLimitFilter filter(FailureMode failureMode) {
        Rule rule = new Rule("login", "login", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("login.", 5, 1, Duration.ofSeconds(1)), 0, Mode.ENFORCE, failureMode);
        RuleSet rules = RuleSet.builder("free").rule(rule).build();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules,
                checks -> Mono.error(new IllegalStateException("a bug in the store adapter")), ClientIds.unkeyed());
        return new RateLimitFilter(evaluator,
                new RequestIdentity("X-Key", "X-User", "X-Tenant", new ClientAddressResolver(List.of(), 32, 64)),
                new ApiKeyRefusals(false, HttpStatusCode.valueOf(401), HttpStatusCode.valueOf(401)),
                VerdictListener.NONE, Clock.systemUTC(), 0);
    }
}

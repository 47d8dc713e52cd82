package dev.ratelimiter.gateway.webflux;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimiter.core.ClientAddressResolver;
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
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.RequestIdentity;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * A decision that fails inside the limiter (a bug: store failures are already answered by the failure modes) is
 * decided by the rules' failure modes: a fail-closed rule still refuses with 503, an open one lets the request on.
 * Before, every such request went through, fail-closed rules included; and a failure thrown (not signalled) while
 * the store call was set up, or a request object no server made, escaped the filter as a 500.
 */
class FailedDecisionTest {

    /** A store adapter with a bug that signals it. */
    private static final RateLimitStore SIGNALS_AN_ERROR =
            checks -> Mono.error(new IllegalStateException("a bug in the store adapter"));

    /** A store adapter with a bug that throws while the call is set up, instead of signalling an error. */
    private static final RateLimitStore THROWS_WHILE_CALLED = checks -> {
        throw new IllegalStateException("a bug in the store adapter, thrown while called");
    };

    @Test
    void aFailClosedRuleRefusesWith503WhenTheDecisionFails() {
        MockServerWebExchange exchange = exchange();
        assertThat(run(filter(FailureMode.CLOSED, false, SIGNALS_AN_ERROR), exchange))
                .as("the request never reached the chain").isZero();
        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(5)))
                .contains("limiter_unavailable");
    }

    @Test
    void anOpenRuleLetsTheRequestOnWhenTheDecisionFails() {
        assertThat(run(filter(FailureMode.OPEN, false, SIGNALS_AN_ERROR), exchange())).isEqualTo(1);
    }

    @Test
    void aFailOpenRuleLetsTheRequestThroughWhenTheStoreThrowsWhileCalled() {
        assertThat(run(filter(FailureMode.OPEN, false, THROWS_WHILE_CALLED), exchange())).isEqualTo(1);
    }

    @Test
    void aFailClosedRuleRefusesWith503WhenTheStoreThrowsWhileCalled() {
        MockServerWebExchange exchange = exchange();
        assertThat(run(filter(FailureMode.CLOSED, false, THROWS_WHILE_CALLED), exchange)).isZero();
        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(5)))
                .contains("limiter_unavailable");
    }

    /**
     * A filter ahead of the limiter wrapped the request in its own ServerHttpRequest (implementing the interface, not
     * extending ServerHttpRequestDecorator): Spring cannot find the native request under it and says so with
     * IllegalArgumentException. That must not make every request a 500, the kill switch's included.
     */
    @Test
    void theKillSwitchLetsThroughARequestAFilterWrappedInItsOwnRequestType() {
        ServerWebExchange exchange = wrapped(exchange());
        assertThat(run(filter(FailureMode.OPEN, true, new LocalBucketStore(100)), exchange)).isEqualTo(1);
    }

    @Test
    void anAllowedRequestAFilterWrappedInItsOwnRequestTypeGoesOn() {
        ServerWebExchange exchange = wrapped(exchange());
        assertThat(run(filter(FailureMode.OPEN, false, new LocalBucketStore(100)), exchange)).isEqualTo(1);
    }

    /** Runs the filter; how many times the chain was called. The filter itself must not fail, however it fails. */
    private static int run(RateLimitFilter filter, ServerWebExchange exchange) {
        AtomicInteger passed = new AtomicInteger();
        assertThatCode(() -> Mono.defer(() -> filter.filter(exchange, served -> {
            passed.incrementAndGet();
            return Mono.empty();
        })).block(Duration.ofSeconds(5))).as("the filter fails: a 500 from the gateway").doesNotThrowAnyException();
        return passed.get();
    }

    private static MockServerWebExchange exchange() {
        return MockServerWebExchange.from(MockServerHttpRequest.get("/api/x").header("X-Key", "k1"));
    }

    /** The request behind an interface proxy: what a user's own ServerHttpRequest wrapper looks like to Spring. */
    private static ServerWebExchange wrapped(ServerWebExchange exchange) {
        ServerHttpRequest original = exchange.getRequest();
        ServerHttpRequest custom = (ServerHttpRequest) Proxy.newProxyInstance(FailedDecisionTest.class.getClassLoader(),
                new Class<?>[] { ServerHttpRequest.class }, (proxy, method, args) -> {
                    if (method.isDefault()) {
                        return InvocationHandler.invokeDefault(proxy, method, args);
                    }
                    try {
                        return method.invoke(original, args);
                    }
                    catch (InvocationTargetException ex) {
                        throw ex.getCause();
                    }
                });
        return exchange.mutate().request(custom).build();
    }

    private static RateLimitFilter filter(FailureMode failureMode, boolean killSwitch, RateLimitStore store) {
        Rule rule = new Rule("login", "login", Match.ANY, List.of(Dimension.API_KEY),
                TokenBucketLimit.of("login.", 5, 1, Duration.ofSeconds(1)), 0, Mode.ENFORCE, failureMode);
        RuleSet rules = RuleSet.builder("free").rule(rule).killSwitch(killSwitch).build();
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, store, ClientIds.unkeyed());
        return new RateLimitFilter(evaluator,
                new RequestIdentity("X-Key", "X-User", "X-Tenant", new ClientAddressResolver(List.of(), 32, 64)),
                new ApiKeyRefusals(false, HttpStatusCode.valueOf(401), HttpStatusCode.valueOf(401)),
                VerdictListener.NONE, Clock.systemUTC(), 0);
    }
}

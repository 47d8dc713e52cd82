package dev.ratelimiter.mvc;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.ClientAddressResolver;
import dev.ratelimiter.core.ClientIds;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.RateLimitStore;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.gateway.RequestIdentity;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatusCode;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.servlet.function.ServerRequest;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A decision that fails (a limiter bug: store failures are answered by the failure modes before this) is said at
 * ERROR at most once a minute, the others at DEBUG, on both flavours: the shared pipeline recovers it and logs it
 * through a throttled log, so a failing limiter cannot flood the log at request rate (as MVC's DecisionWait promised
 * before the pipeline was shared, and WebFlux did not).
 */
class FailedDecisionLoggingMvcTest {

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Logger root = (Logger) LoggerFactory.getLogger("dev.ratelimiter");

    private Level levelBefore;

    @BeforeEach
    void capture() {
        levelBefore = root.getLevel();
        root.setLevel(Level.DEBUG);
        appender.start();
        root.addAppender(appender);
    }

    @AfterEach
    void release() {
        root.detachAppender(appender);
        root.setLevel(levelBefore);
    }

    @Test
    void aFailingDecisionIsLoggedAtErrorAtMostOnceAMinuteNotAtRequestRate() {
        RuleSet rules = RuleSet.builder("free").rule(new Rule("login", "login", Match.ANY,
                List.of(Dimension.API_KEY), TokenBucketLimit.of("login.", 5, 1, Duration.ofHours(1)), 0,
                Mode.ENFORCE, FailureMode.OPEN)).build();
        RateLimitStore broken = checks -> Mono.error(new IllegalStateException("a bug in the store adapter"));
        RateLimitEvaluator evaluator = new RateLimitEvaluator(() -> rules, broken, ClientIds.unkeyed());
        RequestIdentity identity = new RequestIdentity("X-API-Key", "X-User", "X-Tenant",
                new ClientAddressResolver(List.of(), 32, 64));
        Admission admission = new Admission(evaluator, identity, new ApiKeyRefusals(false,
                HttpStatusCode.valueOf(401), HttpStatusCode.valueOf(401)), ApiKeyFormat.ANY,
                (request, verdict) -> { }, Clock.systemUTC());
        MvcRateLimiter limiter = new MvcRateLimiter(evaluator, identity, admission, Duration.ofSeconds(2),
                route -> Map.of(), RefusalRenderer.defaults());

        for (int i = 0; i < 20; i++) {
            MockHttpServletRequest servlet = new MockHttpServletRequest("GET", "/api/x");
            servlet.addHeader("X-API-Key", "key-number-" + i);
            LimitedRequest limited = new LimitedRequest(servlet, new MockHttpServletResponse());
            assertThat(limiter.decide(ServerRequest.create(limited, List.of()), "api", Map.of(), limited))
                    .as("fail open: let through").isNull();
        }

        List<ILoggingEvent> loud = appender.list.stream()
                .filter(event -> event.getLevel().isGreaterOrEqual(Level.WARN)).toList();
        assertThat(loud).as("WARN/ERROR lines for 20 failed decisions: %s",
                loud.stream().map(e -> e.getLevel() + " " + e.getLoggerName()).toList()).hasSize(1);
        assertThat(loud).singleElement().satisfies(event -> {
            assertThat(event.getLevel()).isEqualTo(Level.ERROR);
            assertThat(event.getFormattedMessage()).contains("Rate-limit decision failed")
                    .contains("at most once a minute");
            assertThat(event.getThrowableProxy()).as("the cause is logged").isNotNull();
        });
        assertThat(appender.list).as("the other 19 at DEBUG")
                .filteredOn(event -> event.getLevel() == Level.DEBUG).hasSize(19);
    }
}

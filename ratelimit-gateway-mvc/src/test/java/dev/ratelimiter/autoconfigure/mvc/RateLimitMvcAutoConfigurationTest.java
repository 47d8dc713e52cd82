package dev.ratelimiter.autoconfigure.mvc;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.Admission;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.RefusalRenderer;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.mvc.MvcRateLimiter;
import dev.ratelimiter.mvc.RateLimitServletFilter;
import dev.ratelimiter.mvc.RouterFunctionLimiting;
import dev.ratelimiter.mvc.UpstreamCallTracking;
import org.junit.jupiter.api.Test;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.cloud.gateway.server.mvc.config.GatewayMvcProperties;
import org.springframework.cloud.gateway.server.mvc.handler.ProxyExchange;
import org.springframework.cloud.gateway.server.mvc.handler.RestClientProxyExchange;
import org.springframework.http.HttpStatus;
import org.springframework.security.web.DefaultSecurityFilterChain;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.client.RestClient;
import org.springframework.web.servlet.function.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitMvcAutoConfigurationTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                    RateLimitMvcAutoConfiguration.class, RateLimitMvcOperatorExposureAutoConfiguration.class))
            .withPropertyValues("ratelimit.store.type=memory");

    @Test
    void inAServletApplicationTheLimiterItsFilterAndTheRouteWrappingArePresent() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(MvcRateLimiter.class)
                    .hasSingleBean(RateLimitServletFilter.class).hasSingleBean(RouterFunctionLimiting.class);
        });
    }

    /**
     * The gateway's proxy exchange tells each request when its upstream call starts and returns (permits are held
     * until then), and keeps its own class: whatever injects it as a {@code RestClientProxyExchange} still gets it.
     */
    @Test
    void theGatewaysProxyExchangeIsAdvisedAndKeepsItsClass() {
        runner.withBean("restClientProxyExchange", RestClientProxyExchange.class,
                () -> new RestClientProxyExchange(RestClient.create(), new GatewayMvcProperties())).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(UpstreamCallTracking.class);
                    assertThat(context.getBean(RestClientProxyExchange.class))
                            .isInstanceOf(UpstreamCallTracking.Tracked.class);
                });
    }

    /** An application's own exchange, of a final class (records and many hand-written classes are). */
    static final class MyExchange implements ProxyExchange {

        @Override
        public ServerResponse exchange(Request request) {
            return ServerResponse.ok().build();
        }
    }

    /** Something of the application that uses its exchange by its class. */
    record UsesMyExchange(MyExchange exchange) {
    }

    /**
     * A final exchange cannot be subclassed: it is left as it is (with a warning), never swapped for an interface
     * proxy that whatever injects it by its class would refuse (found by the attack review: the start-up failed).
     */
    @Test
    void anApplicationsOwnFinalProxyExchangeKeepsItsClassUnadvised() {
        runner.withBean("myExchange", MyExchange.class, MyExchange::new).withBean(UsesMyExchange.class)
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(UpstreamCallTracking.class);
                    assertThat(context.getBean("myExchange")).isExactlyInstanceOf(MyExchange.class);
                });
    }

    @Test
    void anApplicationsOwnLimiterReplacesOurs() {
        MvcRateLimiter mine = mine();
        runner.withBean(MvcRateLimiter.class, () -> mine).run(context -> {
            assertThat(context).hasSingleBean(MvcRateLimiter.class);
            assertThat(context.getBean(MvcRateLimiter.class)).isSameAs(mine);
        });
    }

    @Test
    void switchedOffThereIsNoLimiterAndNoFilter() {
        runner.withPropertyValues("ratelimit.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(MvcRateLimiter.class).doesNotHaveBean(RateLimitServletFilter.class)
                .doesNotHaveBean(RouterFunctionLimiting.class).doesNotHaveBean(UpstreamCallTracking.class));
    }

    @Test
    void withoutGatewayServerMvcOnTheClassPathItBacksOff() {
        runner.withClassLoader(new FilteredClassLoader(MvcUtils.class)).run(context -> assertThat(context)
                .doesNotHaveBean(MvcRateLimiter.class).doesNotHaveBean(RouterFunctionLimiting.class));
    }

    @Test
    void inAReactiveApplicationItBacksOff() {
        new ReactiveWebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                        RateLimitMvcAutoConfiguration.class))
                .withPropertyValues("ratelimit.store.type=memory")
                .run(context -> assertThat(context).doesNotHaveBean(MvcRateLimiter.class));
    }

    /** The application has no Spring Security of its own (the module's tests have it for the resource server). */
    private final WebApplicationContextRunner withoutSpringSecurity = runner
            .withClassLoader(new FilteredClassLoader("org.springframework.security"));

    @Test
    void operatorEndpointsBeyondThisHostWithTheLimitersAuthenticationSwitchedOffFailTheStartUp() {
        withoutSpringSecurity.withPropertyValues("management.endpoints.web.exposure.include=health,ratelimitcontrol",
                "ratelimit.management.security.enabled=false").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLimitException.class)
                            .hasMessageContaining("ratelimit.management.security.enabled=false")
                            .hasMessageContaining("every address of the host");
                });
        withoutSpringSecurity.withPropertyValues("management.endpoints.web.exposure.include=*",
                "ratelimit.management.security.enabled=false").run(context -> assertThat(context).hasFailed());
    }

    /**
     * The actuator matches exposed ids ignoring case and dashes, so the refusal does too: any spelling that exposes
     * the kill switch fails the start-up, and one that the exclusions take back does not.
     */
    @Test
    void operatorEndpointsExposedUnderAnySpellingTheActuatorAcceptsFailTheStartUp() {
        for (String include : List.of("health,rateLimit,rate-limit-control", "rate-limit",
                "rateLimitControl", "health, rate-limit-control ", "health,*")) {
            withoutSpringSecurity.withPropertyValues("management.endpoints.web.exposure.include=" + include,
                    "ratelimit.management.security.enabled=false").run(context -> {
                        assertThat(context).as(include).hasFailed();
                        assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLimitException.class)
                                .hasMessageContaining("ratelimit.management.security.enabled=false");
                    });
        }
        withoutSpringSecurity.withPropertyValues("management.endpoints.web.exposure.include=*",
                "management.endpoints.web.exposure.exclude=rate-limit,rateLimitControl",
                "ratelimit.management.security.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(MvcRateLimiter.class));
    }

    /** The refusal is its own bean: an application that brings its own limiter keeps it. */
    @Test
    void anApplicationsOwnLimiterDoesNotTakeTheRefusalAway() {
        MvcRateLimiter mine = mine();
        withoutSpringSecurity.withBean(MvcRateLimiter.class, () -> mine)
                .withPropertyValues("management.endpoints.web.exposure.include=ratelimitcontrol",
                        "ratelimit.management.security.enabled=false")
                .run(context -> assertThat(context).hasFailed());
        withoutSpringSecurity.withBean(MvcRateLimiter.class, () -> mine)
                .withPropertyValues("ratelimit.rules-api.enabled=true", "ratelimit.management.security.enabled=false")
                .run(context -> assertThat(context).hasFailed());
    }

    /**
     * The starter brings Spring Security's classes, so they say nothing of the application's own security: switched
     * off beyond this host without a chain of the application's, the start-up still fails.
     */
    @Test
    void springSecurityOnTheClasspathWithoutAChainOfTheApplicationsDoesNotCount() {
        runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimitcontrol",
                "ratelimit.management.security.enabled=false").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLimitException.class)
                            .hasMessageContaining("no Spring Security chain of the application's own");
                });
    }

    /** Lazy initialisation makes no bean nobody asks for; the refusal is made all the same. */
    @Test
    void underLazyInitialisationTheRefusalStillRuns() {
        withoutSpringSecurity.withInitializer(context -> context.addBeanFactoryPostProcessor(
                new LazyInitializationBeanFactoryPostProcessor()))
                .withPropertyValues("management.endpoints.web.exposure.include=ratelimitcontrol",
                        "ratelimit.management.security.enabled=false")
                .run(context -> assertThat(context).hasFailed());
    }

    @Test
    void theRulesApiBeyondThisHostWithTheLimitersAuthenticationSwitchedOffFailsTheStartUp() {
        withoutSpringSecurity.withPropertyValues("management.server.port=0",
                "ratelimit.management.security.enabled=false").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLimitException.class)
                            .hasMessageContaining("rules API").hasMessageContaining("no Spring Security");
                });
        withoutSpringSecurity.withPropertyValues("ratelimit.rules-api.enabled=true",
                "ratelimit.management.security.enabled=false").run(context -> assertThat(context).hasFailed());
    }

    @Test
    void operatorEndpointsBeyondThisHostStartWhenAuthenticatedOnLoopbackOrUnderTheApplicationsOwnSecurity() {
        // authenticated by the limiter's filter (the default wherever they leave loopback)
        withoutSpringSecurity.withPropertyValues("management.endpoints.web.exposure.include=*",
                "management.server.port=0")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(MvcRateLimiter.class));
        withoutSpringSecurity.withPropertyValues("management.endpoints.web.exposure.include=ratelimit,ratelimitcontrol",
                "management.server.port=0", "management.server.address=127.0.0.1",
                "ratelimit.management.security.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(MvcRateLimiter.class));
        // switched off, but the application's own Spring Security chain can protect them
        runner.withBean(SecurityFilterChain.class, () -> new DefaultSecurityFilterChain(request -> true))
                .withPropertyValues("management.endpoints.web.exposure.include=ratelimit",
                        "ratelimit.management.security.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(MvcRateLimiter.class));
        withoutSpringSecurity.withPropertyValues("management.endpoints.web.exposure.include=health,prometheus",
                "ratelimit.management.security.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(MvcRateLimiter.class));
    }

    private static MvcRateLimiter mine() {
        RateLimitEvaluator evaluator = null;
        RequestIdentity identity = new RequestIdentity("X-API-Key", "X-User-Id", "X-Tenant-Id", null);
        return new MvcRateLimiter(evaluator, identity, new Admission(evaluator, identity,
                new ApiKeyRefusals(false, HttpStatus.UNAUTHORIZED, HttpStatus.UNAUTHORIZED), ApiKeyFormat.ANY,
                VerdictListener.all(List.of()), Clock.systemUTC()), Duration.ofMillis(10), routeId -> Map.of(),
                RefusalRenderer.defaults());
    }
}

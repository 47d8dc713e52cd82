package dev.ratelimiter.autoconfigure.mvc;

import dev.ratelimiter.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimiter.mvc.UpstreamCallTracking;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.cloud.gateway.server.mvc.handler.ProxyExchange;
import org.springframework.web.servlet.function.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Review of feed21a (review-end): UpstreamCallTracking post-processes every ProxyExchange bean, an application's own
 * included. "The bean keeps its own class" holds only for a class CGLIB can subclass; for a final class it falls back
 * to an interface proxy, so the application's bean is no longer of its own class: whatever injects it by that class
 * fails the start-up, because the rate limiter is on the classpath.
 */
class ReviewEndUpstreamCallTrackingBeansTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                    RateLimitMvcAutoConfiguration.class))
            .withPropertyValues("ratelimit.store.type=memory");

    /** An application's own exchange, a final class (records and many hand-written classes are). */
    static final class MyExchange implements ProxyExchange {

        @Override
        public ServerResponse exchange(Request request) {
            return ServerResponse.ok().build();
        }
    }

    /** Something of the application that uses its exchange by its class. */
    record UsesMyExchange(MyExchange exchange) {
    }

    @Test
    void anApplicationsOwnFinalProxyExchangeBeanKeepsItsClass() {
        runner.withBean("myExchange", MyExchange.class, MyExchange::new)
                .withBean(UsesMyExchange.class)
                .run(context -> {
                    assertThat(context).hasSingleBean(UpstreamCallTracking.class);
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean("myExchange")).isInstanceOf(MyExchange.class);
                });
    }
}

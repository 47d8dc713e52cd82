package dev.ratelimiter.autoconfigure;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

import dev.ratelimiter.core.ClientAddressResolver;
import dev.ratelimiter.core.RateLimitEvaluator;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.ApiKeyRefusals;
import dev.ratelimiter.gateway.RateLimitResponseCustomizer;
import dev.ratelimiter.gateway.RequestIdentity;
import dev.ratelimiter.gateway.webflux.RateLimitFilter;
import dev.ratelimiter.gateway.webflux.RefusalWriter;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatusCode;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitGatewayAutoConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                    RateLimitGatewayAutoConfiguration.class));

    @Test
    void aReactiveGatewayGetsTheFilterOrderedBeforeRouting() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(RateLimitFilter.class);
            assertThat(context.getBean(RateLimitFilter.class).getOrder()).isEqualTo(-100);
        });
    }

    @Test
    void filterOrderIsConfigurable() {
        runner.withPropertyValues("ratelimit.filter-order=5")
                .run(context -> assertThat(context.getBean(RateLimitFilter.class).getOrder()).isEqualTo(5));
    }

    @Test
    void theRemovedTrustedProxyHopsFailsTheStartWithWhatToDoInstead() {
        runner.withPropertyValues("ratelimit.identity.trusted-proxy-hops=1").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("trusted-proxy-hops was removed")
                .hasMessageContaining("ratelimit.identity.trusted-proxies"));
    }

    @Test
    void aTrustedProxyThatIsNotAnAddressFailsTheStartNamingIt() {
        runner.withPropertyValues("ratelimit.identity.trusted-proxies=10.0.0.0/8,ingress.internal").run(context ->
                assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("'ingress.internal' is not an IP address or CIDR block"));
        runner.withPropertyValues("ratelimit.identity.ipv6-prefix=0").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("ipv6-prefix must be between 1 and 128"));
    }

    @Test
    void anApiKeyPatternThatIsNotARegularExpressionFailsTheStartNamingIt() {
        runner.withPropertyValues("ratelimit.api-key.pattern=[a-z").run(context -> assertThat(context).getFailure()
                .rootCause().hasMessageContaining("ratelimit.api-key.pattern '[a-z' is not a regular expression"));
        runner.withPropertyValues("ratelimit.api-key.max-length=-1").run(context -> assertThat(context).getFailure()
                .rootCause().hasMessageContaining("ratelimit.api-key.max-length must be 0 (no limit) or more"));
        runner.withPropertyValues("ratelimit.identity.tenant.pattern=[a-z").run(context -> assertThat(context)
                .getFailure().rootCause()
                .hasMessageContaining("ratelimit.identity.tenant.pattern '[a-z' is not a regular expression"));
        runner.withPropertyValues("ratelimit.identity.user.max-length=-1").run(context -> assertThat(context)
                .getFailure().rootCause()
                .hasMessageContaining("ratelimit.identity.user.max-length must be 0 (no limit) or more"));
    }

    @Test
    void aUserFilterMakesOursBackOff() {
        runner.withUserConfiguration(UserFilter.class).run(context -> {
            assertThat(context).hasSingleBean(RateLimitFilter.class);
            assertThat(context.getBean(RateLimitFilter.class).getOrder()).isEqualTo(42);
        });
    }

    @Test
    void responseCustomizerBeansShapeEveryRefusalInTheirOrder() {
        runner.withUserConfiguration(OrderedCustomizers.class).run(context -> {
            MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api"));
            context.getBean(RefusalWriter.class).overloaded(exchange, null, "reports", "normal", 1)
                    .block(Duration.ofSeconds(5));
            assertThat(exchange.getResponse().getHeaders().get("X-Order")).containsExactly("first", "second");
        });
    }

    @Test
    void aUserRefusalWriterMakesOursBackOff() {
        RefusalWriter mine = new RefusalWriter(List.of());
        runner.withBean(RefusalWriter.class, () -> mine).withUserConfiguration(OrderedCustomizers.class)
                .run(context -> assertThat(context.getBean(RefusalWriter.class)).isSameAs(mine));
    }

    @Test
    void switchedOffThereIsNoFilter() {
        runner.withPropertyValues("ratelimit.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(RateLimitFilter.class));
    }

    @Test
    void withoutTheGatewayOnTheClasspathThereIsNoFilter() {
        runner.withClassLoader(new FilteredClassLoader(GlobalFilter.class))
                .run(context -> assertThat(context).doesNotHaveBean(RateLimitFilter.class));
    }

    @Test
    void aServletApplicationGetsNoFilter() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
                        RateLimitGatewayAutoConfiguration.class))
                .run(context -> assertThat(context).doesNotHaveBean(RateLimitFilter.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OrderedCustomizers {

        @Bean
        @Order(2)
        RateLimitResponseCustomizer second() {
            return (refusal, context) -> refusal.getHeaders().add("X-Order", "second");
        }

        @Bean
        @Order(1)
        RateLimitResponseCustomizer first() {
            return (refusal, context) -> refusal.getHeaders().add("X-Order", "first");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserFilter {

        @Bean
        RateLimitFilter myFilter(RateLimitEvaluator evaluator) {
            return new RateLimitFilter(evaluator, new RequestIdentity("X-Key", "X-User", "X-Tenant",
                    new ClientAddressResolver(List.of(), 32, 64)),
                    new ApiKeyRefusals(false, HttpStatusCode.valueOf(401), HttpStatusCode.valueOf(401)), VerdictListener.NONE, Clock.systemUTC(),
                    42);
        }
    }
}

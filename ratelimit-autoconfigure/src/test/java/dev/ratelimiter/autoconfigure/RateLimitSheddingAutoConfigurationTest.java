package dev.ratelimiter.autoconfigure;

import java.time.Duration;

import dev.ratelimiter.core.InvalidLimitException;
import dev.ratelimiter.core.LoadShedders;
import dev.ratelimiter.core.Priority;
import dev.ratelimiter.gateway.RateLimitResponseCustomizer;
import dev.ratelimiter.gateway.webflux.LoadSheddingFilter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitSheddingAutoConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RateLimitSheddingAutoConfiguration.class));

    @Test
    void theFilterRunsRightAfterTheRateLimiterAndShedsOnlyConfiguredUpstreams() {
        runner.withPropertyValues("ratelimit.shedding.upstreams.reports.max-in-flight=40",
                "ratelimit.shedding.upstreams.search.route-ids=search-a,search-b",
                "ratelimit.shedding.upstreams.search.max-in-flight=10",
                "ratelimit.shedding.upstreams.search.adaptive=true")
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .run(context -> {
                    assertThat(context.getBean(LoadSheddingFilter.class).getOrder()).isEqualTo(-99);
                    LoadShedders shedders = context
                            .getBean(LoadShedders.class);
                    assertThat(shedders.byRoute()).containsOnlyKeys("reports", "search-a", "search-b");
                    assertThat(shedders.byRoute().get("reports").limit()).isEqualTo(40);
                    assertThat(shedders.byRoute().get("search-a")).isSameAs(shedders.byRoute().get("search-b"));
                    assertThat(shedders.byRoute().get("search-a").limit()).as("adaptive: starts at half the ceiling")
                            .isEqualTo(5);
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    assertThat(meters.get("ratelimit.upstream.limit").tag("upstream", "reports").gauge().value())
                            .isEqualTo(40);
                    assertThat(meters.get("ratelimit.shed").tag("upstream", "search").tag("priority", "background")
                            .functionCounter().count()).isZero();
                });
    }

    @Test
    void aShedRequestsAnswerGoesThroughTheResponseCustomizersEvenWithoutTheGatewayAutoConfiguration() {
        runner.withPropertyValues("ratelimit.shedding.upstreams.reports.max-in-flight=1")
                .withBean(RateLimitResponseCustomizer.class, () -> (refusal, context) -> refusal.getHeaders()
                        .set("X-Refusal", context.kind().error()))
                .run(context -> {
                    assertThat(context.getBean(LoadShedders.class).byRoute().get("reports")
                            .tryAcquire(Priority.CRITICAL)).as("the one slot, held").isNotNull();
                    MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/r"));
                    exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR, Route.async().id("reports")
                            .uri("http://127.0.0.1:1").predicate(ignored -> true).build());
                    context.getBean(LoadSheddingFilter.class).filter(exchange, ignored -> Mono.empty())
                            .block(Duration.ofSeconds(5));
                    assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(503);
                    assertThat(exchange.getResponse().getHeaders().getFirst("X-Refusal")).isEqualTo("overloaded");
                });
    }

    @Test
    void switchedOffThereIsNoFilter() {
        runner.withPropertyValues("ratelimit.shedding.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(LoadSheddingFilter.class));
    }

    @Test
    void badSettingsAreRefusedWithTheSettingNamed() {
        runner.withPropertyValues("ratelimit.shedding.upstreams.reports.max-in-flight=0").run(context -> assertThat(
                context).getFailure().hasRootCauseInstanceOf(InvalidLimitException.class).rootCause()
                .hasMessageContaining("ratelimit.shedding.upstreams.reports.max-in-flight must be at least 1"));
        runner.withPropertyValues("ratelimit.shedding.default-priority=urgent").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("default-priority must be critical, normal or "
                        + "background, but was 'urgent'"));
        runner.withPropertyValues("ratelimit.shedding.target-utilisation=1.5").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("target-utilisation must be between 0 and 1"));
        runner.withPropertyValues("ratelimit.shedding.upstreams.a.route-ids=shared",
                "ratelimit.shedding.upstreams.a.max-in-flight=5", "ratelimit.shedding.upstreams.b.route-ids=shared",
                "ratelimit.shedding.upstreams.b.max-in-flight=5").run(context -> assertThat(context).getFailure()
                        .rootCause().hasMessageContaining("which upstream 'a' already protects"));
    }
}

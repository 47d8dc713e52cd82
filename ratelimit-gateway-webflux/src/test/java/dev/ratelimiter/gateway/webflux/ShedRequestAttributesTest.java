package dev.ratelimiter.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.netflix.concurrency.limits.limit.FixedLimit;
import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.Priority;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Verdict;
import dev.ratelimiter.core.VerdictListener;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A shed request is reported with the attributes the rate limiter found for it, not a second reading of the request;
 * only where the rate limiter did not see it, with what its route says.
 */
class ShedRequestAttributesTest {

    private final List<RequestAttributes> shed = new ArrayList<>();
    private final VerdictListener listener = new VerdictListener() {

        @Override
        public void onVerdict(RequestAttributes request, Verdict verdict) {
        }

        @Override
        public void onShed(RequestAttributes request, Priority priority, String upstream) {
            shed.add(request);
        }
    };

    /** Full: its one request in progress is held for the whole test, so every further request is shed. */
    private final LoadShedder full = new LoadShedder("reports", FixedLimit.of(1), 0.5, () -> 0.0, System::nanoTime);
    private final LoadSheddingFilter filter = new LoadSheddingFilter(Map.of("reports", full), listener,
            Priority.NORMAL, null, false, Duration.ofSeconds(1), 0);
    private final Route route = Route.async().id("reports").uri("http://127.0.0.1:1").predicate(exchange -> true)
            .metadata(RateLimitFilter.ROUTE_CLASS_METADATA, "batch").build();

    ShedRequestAttributesTest() {
        assertThat(full.tryAcquire(Priority.CRITICAL)).isNotNull();
    }

    @Test
    void aShedRequestIsReportedWithTheAttributesTheRateLimiterStored() {
        RequestAttributes limited = new RequestAttributes("key-1", "user-1", "tenant-1", "10.0.0.1", "reports",
                "/reports/daily", "batch", "gold", 3);
        MockServerWebExchange exchange = exchange("/reports/daily");
        exchange.getAttributes().put(RateLimitFilter.REQUEST_ATTRIBUTE, limited);

        filter.filter(exchange, ignored -> Mono.empty()).block(Duration.ofSeconds(5));

        assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(503);
        assertThat(shed).singleElement().isSameAs(limited);
    }

    @Test
    void withoutTheRateLimiterAShedRequestIsReportedWithItsRouteOnly() {
        MockServerWebExchange exchange = exchange("/reports//daily/");

        filter.filter(exchange, ignored -> Mono.empty()).block(Duration.ofSeconds(5));

        assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(503);
        assertThat(shed).containsExactly(new RequestAttributes(null, null, null, null, "reports", "/reports/daily",
                "batch", null, 1));
    }

    @Test
    void theRouteOnlyAttributesTakeTheDefaultRouteClassWhenTheRouteNamesNone() {
        Route plain = Route.async().id("plain").uri("http://127.0.0.1:1").predicate(exchange -> true).build();

        RequestAttributes attributes = RateLimitFilter.attributesOf(exchange("/x"), plain);

        assertThat(attributes).isEqualTo(RequestAttributes.ofRoute("plain", "/x", RateLimitFilter.DEFAULT_ROUTE_CLASS));
        assertThat(attributes.cost()).isEqualTo(1);
        assertThat(attributes.apiKey()).isNull();
    }

    private MockServerWebExchange exchange(String path) {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get(path));
        exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR, route);
        return exchange;
    }
}

package dev.ratelimiter.gateway.webflux;

import java.time.Duration;
import java.util.Map;

import dev.ratelimiter.core.Priority;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/** How a request's priority is found: route metadata, the default, and a header that may only lower it. */
class LoadSheddingPriorityTest {

    private final LoadSheddingFilter untrusted = filter(false);
    private final LoadSheddingFilter trusted = filter(true);

    @Test
    void routeMetadataElseTheDefault() {
        assertThat(untrusted.priorityOf(route("critical"), exchange(null))).isEqualTo(Priority.CRITICAL);
        assertThat(untrusted.priorityOf(route(null), exchange(null))).isEqualTo(Priority.NORMAL);
        assertThat(untrusted.priorityOf(route("urgent!"), exchange(null))).as("unknown metadata: the default")
                .isEqualTo(Priority.NORMAL);
    }

    @Test
    void anUntrustedHeaderMayLowerThePriorityButNeverRaiseIt() {
        assertThat(untrusted.priorityOf(route("critical"), exchange("background"))).isEqualTo(Priority.BACKGROUND);
        assertThat(untrusted.priorityOf(route("background"), exchange("critical"))).isEqualTo(Priority.BACKGROUND);
        assertThat(untrusted.priorityOf(route(null), exchange("User-Facing"))).isEqualTo(Priority.NORMAL);
        assertThat(untrusted.priorityOf(route("critical"), exchange("nonsense"))).isEqualTo(Priority.CRITICAL);
    }

    @Test
    void aTrustedHeaderSetsThePriority() {
        assertThat(trusted.priorityOf(route("background"), exchange("critical"))).isEqualTo(Priority.CRITICAL);
        assertThat(trusted.priorityOf(route("critical"), exchange("background"))).isEqualTo(Priority.BACKGROUND);
    }

    private static LoadSheddingFilter filter(boolean trustHeader) {
        return new LoadSheddingFilter(Map.of(), dev.ratelimiter.core.VerdictListener.NONE, Priority.NORMAL, "X-Request-Priority", trustHeader,
                Duration.ofSeconds(1), 0);
    }

    private static Route route(String priority) {
        Route.AsyncBuilder builder = Route.async().id("r").uri("http://127.0.0.1:1").predicate(exchange -> true);
        if (priority != null) {
            builder.metadata(LoadSheddingFilter.PRIORITY_METADATA, priority);
        }
        return builder.build();
    }

    private static MockServerWebExchange exchange(String header) {
        MockServerHttpRequest.BaseBuilder<?> request = MockServerHttpRequest.get("/x");
        if (header != null) {
            request.header("X-Request-Priority", header);
        }
        return MockServerWebExchange.from(request);
    }
}

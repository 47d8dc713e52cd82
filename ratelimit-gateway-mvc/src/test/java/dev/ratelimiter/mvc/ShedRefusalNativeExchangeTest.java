package dev.ratelimiter.mvc;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import com.netflix.concurrency.limits.limit.FixedLimit;
import dev.ratelimiter.core.LoadShedder;
import dev.ratelimiter.core.Priority;
import dev.ratelimiter.core.VerdictListener;
import dev.ratelimiter.gateway.Refusal;
import dev.ratelimiter.gateway.RefusalRenderer;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.servlet.function.ServerRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * RefusalContext.nativeExchange() is documented as "on Gateway Server MVC the HttpServletRequest" for every refusal
 * (README, operations.md "Upgrading"), and the WebFlux LoadSheddingFilter passes its exchange. The MVC load shedder's
 * 503 overloaded passes null: a customizer reading the request (a correlation id, a header) gets null there only.
 */
class ShedRefusalNativeExchangeTest {

    @Test
    void aShedRequestsCustomizerSeesTheServletRequestAsTheLimitersRefusalsDo() {
        AtomicReference<Object> seen = new AtomicReference<>("customizer not called");
        AtomicReference<Refusal.Kind> kind = new AtomicReference<>();
        RefusalRenderer renderer = new RefusalRenderer(List.of((refusal, context) -> {
            kind.set(context.kind());
            seen.set(context.nativeExchange(HttpServletRequest.class));
        }));
        LoadShedder full = new LoadShedder("reports", FixedLimit.of(1), 0.5, () -> 0.0, System::nanoTime);
        assertThat(full.tryAcquire(Priority.CRITICAL)).isNotNull();
        MvcLoadShedding shedding = new MvcLoadShedding(Map.of("reports", full), VerdictListener.all(List.of()),
                Priority.NORMAL, null, false, Duration.ofSeconds(1), renderer);
        MockHttpServletRequest servlet = new MockHttpServletRequest("GET", "/reports/daily");
        LimitedRequest limited = new LimitedRequest(servlet, new MockHttpServletResponse());
        ServerRequest request = ServerRequest.create(limited, List.of());

        RefusalRenderer.Rendered shed = shedding.admit(request, "reports", Map.of(), limited);

        assertThat(shed).isNotNull();
        assertThat(shed.status().value()).isEqualTo(503);
        assertThat(kind.get()).isEqualTo(Refusal.Kind.OVERLOADED);
        assertThat(seen.get()).as("the servlet request, as for the limiter's own refusals").isSameAs(limited);
    }
}

package dev.ratelimiter.mvc;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.gateway.RefusalAnswer;
import dev.ratelimiter.gateway.RefusalRenderer;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A customizer's typed view of the problem on Gateway Server MVC, as it reaches the servlet response; and the map view
 * customizers wrote before it, which still writes what it wrote.
 */
class ProblemDetailCustomizerMvcTest {

    private static final RefusalAnswer SHED = RefusalAnswer.overloaded(null, "reports", "background", 4);

    @Test
    void aTypedCustomizerReadsTheServletRequestAndChangesTheProblem() throws Exception {
        RefusalRenderer renderer = new RefusalRenderer(List.of((refusal, context) -> {
            ProblemDetail problem = refusal.getProblemDetail();
            String requestId = context.nativeExchange(HttpServletRequest.class).getHeader("X-Request-Id");
            problem.setInstance(URI.create("urn:request:" + requestId));
            problem.setTitle("Busy");
            problem.getProperties().remove("upstream");
        }));
        MockHttpServletRequest request = new MockHttpServletRequest("GET", "/reports/daily");
        request.addHeader("X-Request-Id", "r-7");

        MockHttpServletResponse response = write(renderer, request);

        assertThat(response.getContentAsString(StandardCharsets.UTF_8)).isEqualTo("{\"type\":\"about:blank\","
                + "\"title\":\"Busy\",\"status\":503,\"detail\":\"The service is at capacity and is shedding "
                + "background requests first; retry after 4 seconds.\",\"instance\":\"urn:request:r-7\","
                + "\"error\":\"overloaded\",\"retryAfter\":4,\"priority\":\"background\"}");
        assertThat(response.getContentLength()).isEqualTo(response.getContentAsByteArray().length);
        assertThat(response.getHeader("Retry-After")).isEqualTo("4");
    }

    @Test
    @SuppressWarnings("deprecation")
    void aMapCustomizerStillWritesTheMembersItLeft() throws Exception {
        RefusalRenderer renderer = new RefusalRenderer(List.of((refusal, context) -> {
            Map<String, Object> body = refusal.getBody();
            body.keySet().retainAll(List.of("status", "error"));
            body.put("support", "https://example.com/status");
        }));

        MockHttpServletResponse response = write(renderer, new MockHttpServletRequest("GET", "/reports/daily"));

        assertThat(response.getContentAsString(StandardCharsets.UTF_8))
                .isEqualTo("{\"status\":503,\"error\":\"overloaded\",\"support\":\"https://example.com/status\"}");
    }

    private static MockHttpServletResponse write(RefusalRenderer renderer, MockHttpServletRequest request)
            throws Exception {
        MockHttpServletResponse response = new MockHttpServletResponse();
        RefusalResponses.write(renderer.render(SHED, new HttpHeaders(), null, request), response);
        return response;
    }
}

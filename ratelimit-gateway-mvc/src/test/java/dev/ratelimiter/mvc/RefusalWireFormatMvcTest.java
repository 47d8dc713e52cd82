package dev.ratelimiter.mvc;

import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.ratelimiter.gateway.RefusalCatalogue;
import dev.ratelimiter.gateway.RefusalRenderer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.http.HttpHeaders;
import org.springframework.http.converter.ByteArrayHttpMessageConverter;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.servlet.function.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every answer of the {@link RefusalCatalogue} as Gateway Server MVC sends it, byte for byte, both ways it is sent:
 * written on the servlet response (a refusal thrown out of the route's filters) and as the route handler's answer;
 * by default and through a customizer that changes nothing.
 */
class RefusalWireFormatMvcTest {

    static List<RefusalCatalogue.Pinned> answers() {
        return RefusalCatalogue.all();
    }

    @ParameterizedTest
    @MethodSource("answers")
    void writtenOnTheServletResponseAsPinned(RefusalCatalogue.Pinned pinned) throws Exception {
        for (RefusalRenderer renderer : renderers()) {
            MockHttpServletResponse response = responseWithRateLimitField();
            RefusalResponses.write(render(renderer, pinned), response);
            assertWritten(response, pinned);
        }
    }

    @ParameterizedTest
    @MethodSource("answers")
    void answeredByTheHandlerAsPinned(RefusalCatalogue.Pinned pinned) throws Exception {
        for (RefusalRenderer renderer : renderers()) {
            // the handler's answer carries the rate-limit field itself: nothing is on the servlet response yet
            MockHttpServletResponse response = new MockHttpServletResponse();
            RefusalResponses.of(render(renderer, pinned)).writeTo(new MockHttpServletRequest("GET", "/api/hello"),
                    response, new ServerResponse.Context() {
                        @Override
                        public List<HttpMessageConverter<?>> messageConverters() {
                            return List.of(new ByteArrayHttpMessageConverter());
                        }
                    });
            assertWritten(response, pinned);
        }
    }

    private static List<RefusalRenderer> renderers() {
        return List.of(RefusalRenderer.defaults(), new RefusalRenderer(List.of((refusal, context) -> { })));
    }

    private static RefusalRenderer.Rendered render(RefusalRenderer renderer, RefusalCatalogue.Pinned pinned) {
        HttpHeaders headers = new HttpHeaders();
        headers.set("RateLimit", "\"hourly\";r=0;t=30");
        return renderer.render(pinned.answer(), headers, null, null);
    }

    private static MockHttpServletResponse responseWithRateLimitField() {
        MockHttpServletResponse response = new MockHttpServletResponse();
        response.setHeader("RateLimit", "\"hourly\";r=0;t=30");
        return response;
    }

    private static void assertWritten(MockHttpServletResponse response, RefusalCatalogue.Pinned pinned) {
        byte[] body = response.getContentAsByteArray();
        assertThat(response.getStatus()).isEqualTo(pinned.status());
        assertThat(new String(body, StandardCharsets.UTF_8)).isEqualTo(pinned.body());
        assertThat(response.getHeaders("RateLimit")).containsExactly("\"hourly\";r=0;t=30");
        pinned.headers().forEach((name, value) -> assertThat(response.getHeaders(name)).as(name)
                .containsExactly(value));
        assertThat(response.getContentLength()).isEqualTo(body.length);
        assertThat(response.getHeaderNames()).hasSize(pinned.headers().size() + 2);
    }
}

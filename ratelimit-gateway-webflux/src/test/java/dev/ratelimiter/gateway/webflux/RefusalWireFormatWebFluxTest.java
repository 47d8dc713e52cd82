package dev.ratelimiter.gateway.webflux;

import java.time.Duration;
import java.util.List;

import dev.ratelimiter.gateway.RefusalCatalogue;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.http.HttpHeaders;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every answer of the {@link RefusalCatalogue} as {@link RefusalWriter} puts it on a WebFlux exchange, byte for byte:
 * the status, the answer's headers beside the rate-limit field set before it, {@code Content-Length}, and the body;
 * by default and through a customizer that changes nothing.
 */
class RefusalWireFormatWebFluxTest {

    static List<RefusalCatalogue.Pinned> answers() {
        return RefusalCatalogue.all();
    }

    @ParameterizedTest
    @MethodSource("answers")
    void theDefaultAnswerIsWrittenAsPinned(RefusalCatalogue.Pinned pinned) {
        assertWritten(RefusalWriter.defaults(), pinned);
    }

    @ParameterizedTest
    @MethodSource("answers")
    void aCustomizerThatChangesNothingLeavesEveryByteAsPinned(RefusalCatalogue.Pinned pinned) {
        assertWritten(new RefusalWriter(List.of((refusal, context) -> { })), pinned);
    }

    private static void assertWritten(RefusalWriter writer, RefusalCatalogue.Pinned pinned) {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/hello"));
        exchange.getResponse().getHeaders().set("RateLimit", "\"hourly\";r=0;t=30");

        writer.write(exchange, pinned.answer()).block(Duration.ofSeconds(5));

        byte[] body = exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(5))
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        HttpHeaders headers = exchange.getResponse().getHeaders();
        assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(pinned.status());
        assertThat(new String(body, java.nio.charset.StandardCharsets.UTF_8)).isEqualTo(pinned.body());
        assertThat(headers.getFirst("RateLimit")).isEqualTo("\"hourly\";r=0;t=30");
        pinned.headers().forEach((name, value) -> assertThat(headers.get(name)).as(name).containsExactly(value));
        assertThat(headers.getContentLength()).isEqualTo(body.length);
        assertThat(headers.headerNames()).hasSize(pinned.headers().size() + 2);
    }
}

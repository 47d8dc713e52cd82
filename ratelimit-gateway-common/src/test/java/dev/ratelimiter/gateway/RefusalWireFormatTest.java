package dev.ratelimiter.gateway;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The wire form of every answer ({@link RefusalCatalogue}) as the shared layer renders it, byte for byte: by default
 * (prebuilt text) and through a customizer that changes nothing (the body built as members, then written), which must
 * not differ by a byte either.
 */
class RefusalWireFormatTest {

    static List<RefusalCatalogue.Pinned> answers() {
        return RefusalCatalogue.all();
    }

    @ParameterizedTest
    @MethodSource("answers")
    void theDefaultAnswerIsWrittenAsPinned(RefusalCatalogue.Pinned pinned) {
        assertWritten(RefusalRenderer.defaults().render(pinned.answer(), new HttpHeaders(), null, null), pinned);
    }

    @ParameterizedTest
    @MethodSource("answers")
    void aCustomizerThatChangesNothingLeavesEveryByteAsPinned(RefusalCatalogue.Pinned pinned) {
        RefusalRenderer untouched = new RefusalRenderer(List.of((refusal, context) -> { }));
        assertWritten(untouched.render(pinned.answer(), new HttpHeaders(), null, null), pinned);
    }

    static void assertWritten(RefusalRenderer.Rendered rendered, RefusalCatalogue.Pinned pinned) {
        assertThat(rendered.status().value()).isEqualTo(pinned.status());
        assertThat(firstValues(rendered.headers())).containsExactlyEntriesOf(pinned.headers());
        assertThat(new String(rendered.body(), StandardCharsets.UTF_8)).isEqualTo(pinned.body());
    }

    private static Map<String, String> firstValues(HttpHeaders headers) {
        Map<String, String> values = new LinkedHashMap<>();
        headers.forEach((name, all) -> values.put(name, String.join(", ", all)));
        return values;
    }
}

package dev.ratelimiter.core;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/** The hand-written JSON reads back, through a real parser, as what was written. */
class JsonTextTest {

    static final JsonMapper json = JsonMapper.builder().build();

    @Test
    void stringsEscapeQuotesBackslashesAndLineBreakersWhereverTheyStand() {
        assertThat(JsonText.quote("plain")).isEqualTo("\"plain\"");
        assertThat(JsonText.quote("\"a\\b\"")).isEqualTo("\"\\\"a\\\\b\\\"\"");
        assertThat(JsonText.quote("x\ny\u2028z\u0085\u007f")).isEqualTo("\"x\\u000ay\\u2028z\\u0085\\u007f\"");
        for (String text : List.of("", "\"", "\\\\", "end\"", "\tstart", "mid\u0000dle", "größer ☃", "a\"b\\c\nd")) {
            assertThat(json.readValue(JsonText.quote(text), String.class)).isEqualTo(text);
        }
    }

    @Test
    void valuesNestAndKeepTheirOrder() {
        Map<String, Object> members = new LinkedHashMap<>();
        members.put("z", 1);
        members.put("a", List.of("x", Map.of("k", true)));
        members.put("n", null);
        members.put("big", Long.MAX_VALUE);
        members.put("half", 0.5);
        members.put("inf", Double.POSITIVE_INFINITY);
        members.put("array", new Object[] { "q\"", 2 });
        members.put("other", Mode.SHADOW);

        String text = JsonText.value(members);

        assertThat(text).startsWith("{\"z\":1,\"a\":");
        @SuppressWarnings("unchecked")
        Map<String, Object> read = json.readValue(text, Map.class);
        assertThat(read).containsExactly(entry("z", 1), entry("a", List.of("x", Map.of("k", true))),
                entry("n", null), entry("big", Long.MAX_VALUE), entry("half", 0.5),
                entry("inf", null), entry("array", Arrays.asList("q\"", 2)), entry("other", "SHADOW"));
    }
}

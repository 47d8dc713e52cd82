package dev.ratelimiter.gateway;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The usage field found in a JSON or event-stream body whatever the chunks it arrives in: every body is cut at random
 * places (and at every byte boundary for the fixed examples), and the field must be found — with its value, never a
 * look-alike's — in decoys of strings holding quotes, braces and the field's own name, arrays, and objects off the path.
 */
class JsonFieldScannerTest {

    private static final List<String> PATH = List.of("usage", "total_tokens");

    @Test
    void findsTheFieldOfAnOpenAiStyleAnswerSplitAtEveryByte() {
        String body = "{\"id\":\"chatcmpl-1\",\"choices\":[{\"message\":{\"content\":\"the \\\"usage\\\": {\\\""
                + "total_tokens\\\": 999} }\"}}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":30,"
                + "\"total_tokens\":42}}";
        for (int cut = 0; cut <= body.length(); cut++) {
            for (int second = cut; second <= body.length(); second += 7) {
                assertThat(scan(body, false, cut, second)).as("cut at %d and %d", cut, second).isEqualTo(42L);
            }
        }
    }

    @Test
    void readsTheLastUsageOfAnEventStream() {
        String body = "data: {\"choices\":[{\"delta\":{\"content\":\"{\\\"usage\\\"\"}}],\"usage\":null}\n\n"
                + ": keep-alive {\n\n"
                + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"total_tokens\":17}}\n\n"
                + "data: [DONE]\n\n";
        for (int cut = 0; cut <= body.length(); cut++) {
            assertThat(scan(body, true, cut, cut)).as("cut at %d", cut).isEqualTo(17L);
        }
    }

    @Test
    void findsNothingWhereTheFieldIsNotANumberOrNotOnThePath() {
        assertThat(scan("{\"usage\":{\"total_tokens\":\"12\"}}", false, 3, 9)).isNull();
        assertThat(scan("{\"total_tokens\":12,\"usage\":{}}", false, 3, 9)).isNull();
        assertThat(scan("{\"x\":{\"usage\":{\"total_tokens\":12}}}", false, 3, 9)).isNull();
        assertThat(scan("{\"usage\":[{\"total_tokens\":12}]}", false, 3, 9)).isNull();
        assertThat(scan("{\"usage\":{\"total_tokens\":-3}}", false, 3, 9)).isNull();
        assertThat(scan("{\"usage\":{\"total_tokens\":null}}", false, 3, 9)).isNull();
        assertThat(scan("{\"usage\":{\"total_tokens\":2.5}}", false, 3, 9)).isEqualTo(3L);
        assertThat(scan("{\"usage\":{\"total_tokens\":1e3}}", false, 3, 9)).isEqualTo(1000L);
    }

    @Test
    void nestingDeeperThanItTracksDoesNotLoseTheField() {
        String deep = "[".repeat(200) + "1" + "]".repeat(200);
        assertThat(scan("{\"a\":" + deep + ",\"usage\":{\"total_tokens\":8}}", false, 100, 300)).isEqualTo(8L);
    }

    /** A body of decoys around the field, at a random place and depth among them, cut in random chunks. */
    @TestFactory
    Stream<DynamicTest> theFieldIsFoundWhereverTheBodyIsCut() {
        return Property.forAll(Gen.of(JsonFieldScannerTest::body, List.of())).tries(2000).check(body -> {
            byte[] bytes = body.text().getBytes(StandardCharsets.UTF_8);
            JsonFieldScanner scanner = new JsonFieldScanner(PATH, body.events());
            Random random = new Random(body.seed());
            int at = 0;
            while (at < bytes.length) {
                int length = 1 + random.nextInt(Math.min(bytes.length - at, 1 + random.nextInt(16)));
                scanner.feed(bytes, at, length);
                at += length;
            }
            assertThat(scanner.found()).as(body.text()).isEqualTo(body.expected());
        });
    }

    record Body(String text, boolean events, Long expected, long seed) {
    }

    private static Body body(Random random, int size) {
        boolean events = random.nextBoolean();
        long value = random.nextInt(1_000_000);
        boolean present = random.nextInt(8) != 0;
        StringBuilder text = new StringBuilder();
        int eventCount = events ? 1 + random.nextInt(3) : 1;
        for (int event = 0; event < eventCount; event++) {
            boolean last = event == eventCount - 1;
            if (events) {
                text.append(random.nextBoolean() ? "event: chunk\n" : "").append("data: ");
            }
            text.append('{');
            List<String> members = new ArrayList<>();
            for (int i = 0; i < random.nextInt(1 + size / 10); i++) {
                members.add(decoy(random, 3));
            }
            if (last && present) {
                String usage = "\"usage\":{" + (random.nextBoolean() ? sibling(random) + "," : "")
                        + "\"total_tokens\":" + value + (random.nextBoolean() ? "," + sibling(random) : "") + "}";
                members.add(random.nextInt(members.size() + 1), usage);
            }
            else if (random.nextBoolean()) {
                members.add("\"usage\":null");
            }
            text.append(String.join(events || random.nextBoolean() ? "," : " ,\n ", members)).append('}');
            text.append(events ? "\n\n" : "");
        }
        if (events) {
            text.append("data: [DONE]\n\n");
        }
        return new Body(text.toString(), events, present ? value : null, random.nextLong());
    }

    /** A member beside the field: any name but the field's own (a JSON object has each name once). */
    private static String sibling(Random random) {
        String decoy = decoy(random, 2);
        return decoy.startsWith("\"total_tokens\":") ? "\"prompt_tokens\"" + decoy.substring(14) : decoy;
    }

    /** A member that must not be taken for the field: its name, quotes and braces in strings, the field nested deeper. */
    private static String decoy(Random random, int depth) {
        String name = switch (random.nextInt(4)) {
            case 0 -> "\"total_tokens\"";
            case 1 -> "\"us\\\"age\"";
            case 2 -> "\"x" + random.nextInt(100) + "\"";
            default -> "\"total_tokens_x\"";
        };
        return name + ":" + decoyValue(random, depth);
    }

    private static String decoyValue(Random random, int depth) {
        int kind = depth <= 0 ? random.nextInt(3) : random.nextInt(6);
        return switch (kind) {
            case 0 -> String.valueOf(random.nextInt(1000) * (random.nextBoolean() ? 1 : -1));
            case 1 -> "\"{\\\"usage\\\":{\\\"total_tokens\\\":7}} ] \\\\\"";
            case 2 -> random.nextBoolean() ? "true" : "null";
            case 3 -> "{\"usage\":{\"total_tokens\":" + random.nextInt(100) + "}," + decoy(random, depth - 1) + "}";
            case 4 -> "[" + decoyValue(random, depth - 1) + ",{\"total_tokens\":5}]";
            default -> "{" + decoy(random, depth - 1) + "}";
        };
    }

    private static Long scan(String body, boolean events, int cut, int second) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        JsonFieldScanner scanner = new JsonFieldScanner(PATH, events);
        scanner.feed(bytes, 0, cut);
        scanner.feed(bytes, cut, second - cut);
        scanner.feed(bytes, second, bytes.length - second);
        return scanner.found();
    }
}

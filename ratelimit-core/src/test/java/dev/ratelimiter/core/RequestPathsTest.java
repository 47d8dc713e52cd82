package dev.ratelimiter.core;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every spelling of a path that an upstream serves as the same resource matches the same rule. Before, rules saw the
 * raw path: {@code /api//hello} passed a cap on {@code /api/hello}.
 */
class RequestPathsTest {

    @Test
    void theTricksThatReachTheSameResourceAllNormaliseToIt() {
        for (String spelling : List.of("/api/hello", "/api//hello", "//api/hello", "/api/./hello", "/api/x/../hello",
                "/api/hello/", "/api/hello;v=1", "/api;x=y/hello", "/api/hell%6F", "/api/hell%6f", "/api%2Fhello",
                "/api%2fhello", "/api/%2E/hello", "/api/x/%2e%2e/hello", "/api\\hello", "/api/x%5C..%5Chello",
                "/api/%252e/hello", "/api/hello//", "/api/hello/.", "/../api/hello", "/api/hello/x/..")) {
            assertThat(RequestPaths.normalise(spelling)).as(spelling).isEqualTo("/api/hello");
        }
    }

    @Test
    void edgesKeepARootAndDoNotInventSegments() {
        assertThat(RequestPaths.normalise(null)).isEqualTo("/");
        assertThat(RequestPaths.normalise("")).isEqualTo("/");
        assertThat(RequestPaths.normalise("/")).isEqualTo("/");
        assertThat(RequestPaths.normalise("/..")).isEqualTo("/");
        assertThat(RequestPaths.normalise("api")).isEqualTo("/api");
        assertThat(RequestPaths.normalise("/files/100%")).isEqualTo("/files/100%");
        assertThat(RequestPaths.normalise("/files/%zz")).isEqualTo("/files/%zz");
        assertThat(RequestPaths.normalise("/caf%C3%A9")).isEqualTo("/café");
        assertThat(RequestPaths.normalise("/\uD83D\uDE00/x")).isEqualTo("/\uD83D\uDE00/x");
        assertThat(RequestPaths.normalise("/a/b")).isSameAs(RequestPaths.normalise("/a/b")).isEqualTo("/a/b");
    }

    @Test
    void patternsMatchTheNormalisedPathIgnoringCase() {
        assertThat(new PathPattern("/api/hello").matches(RequestPaths.normalise("/API/Hello/"))).isTrue();
        assertThat(new PathPattern("/api/hello/").matches("/api/hello")).isTrue();
        assertThat(new PathPattern("/api/**").matches(RequestPaths.normalise("/api/a%0Ab"))).isTrue();
        assertThat(new PathPattern("/users/*/orders").matches(RequestPaths.normalise("/users/7/./orders"))).isTrue();
        assertThat(new PathPattern("/users/*/orders").matches(RequestPaths.normalise("/users/7%2F8/orders"))).isFalse();
        assertThat(new PathPattern("/admin/**").matches(RequestPaths.normalise("/public/..%2Fadmin/x"))).isTrue();
    }

    /**
     * Found by review: with normalised paths, {@code /api/**} (then {@code /api/.*}) no longer matched {@code /api/},
     * {@code /api/.} or {@code /api/hello/..}, all {@code /api} once normalised; and a regular expression for several
     * {@code **} took seconds on a few kilobytes of path. A {@code **} now spans zero or more segments, matched
     * without backtracking.
     */
    @Test
    void doubleStarSpansZeroOrMoreSegmentsInLinearTime() {
        PathPattern api = new PathPattern("/api/**");
        for (String spelling : List.of("/api", "/api/", "/api//", "/api/.", "/api/hello/..", "/api/%2e", "/api/hello%2F..",
                "/api/a/b/c", "/API/x")) {
            assertThat(api.matches(RequestPaths.normalise(spelling))).as(spelling).isTrue();
        }
        assertThat(api.matches("/apix")).isFalse();
        assertThat(api.matches("/")).isFalse();
        assertThat(new PathPattern("/*").matches("/")).isTrue();
        assertThat(new PathPattern("/api/**/hello").matches("/api/hello")).isTrue();
        assertThat(new PathPattern("/api/**/hello").matches("/api/a/b/hello")).isTrue();
        assertThat(new PathPattern("/api/**/hello").matches("/api/a/b/hello/x")).isFalse();
        assertThat(new PathPattern("/**").matches("/")).isTrue();
        assertThat(new PathPattern("/users/*/orders").matches("/users/42/orders")).isTrue();
        assertThat(new PathPattern("/users/*/orders").matches("/users/orders")).isFalse();
        assertThat(new PathPattern("/files/*.PDF").matches("/files/report.pdf")).isTrue();
        assertThat(new PathPattern("/files/a*b*c").matches("/files/axxbyyc")).isTrue();
        assertThat(new PathPattern("/files/a*b*c").matches("/files/axxbyy")).isFalse();

        PathPattern hostile = new PathPattern("/**/a/**/b/**/c/**/d");
        String path = "/api/items" + "/a/b/c".repeat(700);
        long start = System.nanoTime();
        for (int i = 0; i < 100; i++) {
            assertThat(hostile.matches(path)).isFalse();
        }
        // reported, not asserted (no timed assertions): a regular expression took ~2.4 s for one such path
        System.out.printf("100 hostile matches of a %d-character path: %d ms%n", path.length(),
                (System.nanoTime() - start) / 1_000_000);
    }

    /** The segment walk against a slow but obviously right reference: a regular expression over segments. */
    /** A pattern and a path to match it against. */
    record Match(String glob, String path) {
    }

    @TestFactory
    Stream<DynamicTest> segmentMatchingAgreesWithARegularExpression() {
        return Property.forAll(Gen.zip(globs(), plainPaths(), Match::new)).tries(3000)
                .check(match -> segmentMatchingAgreesWithARegularExpression(match.glob(), match.path()));
    }

    private static void segmentMatchingAgreesWithARegularExpression(String glob, String path) {
        StringBuilder regex = new StringBuilder();
        for (String segment : glob.substring(1).split("/")) {
            if (segment.equals("**")) {
                regex.append("(/[^/]+)*");
            }
            else {
                regex.append("/").append(java.util.regex.Pattern.quote(segment).replace("*", "\\E[^/]*\\Q"));
            }
        }
        boolean expected = java.util.regex.Pattern.compile(regex.length() == 0 ? "/" : regex.toString(),
                java.util.regex.Pattern.CASE_INSENSITIVE).matcher(path).matches()
                || path.equals("/") && regex.toString().replace("(/[^/]+)*", "").isEmpty();
        assertThat(new PathPattern(glob).matches(path)).as(glob + " ~ " + path).isEqualTo(expected);
    }

    private static Gen<String> globs() {
        return Gen.elements("a", "b", "*", "**", "a*", "*b", "ab").list(1, 5)
                .map(parts -> "/" + String.join("/", parts));
    }

    private static Gen<String> plainPaths() {
        return Gen.elements("a", "b", "ab", "ba", "aab", "A", "c").list(0, 6)
                .map(parts -> "/" + String.join("/", parts));
    }

    /** A path and a spelling of it made of the tricks above, applied at random. */
    record Spelled(String path, String spelling) {
    }

    /**
     * Servlet containers drop {@code ;parameters} before applying a dot segment, nginx, Go and Express keep
     * {@code ..;} as a name: these paths are {@code /api/x} to the first and under {@code /api/admin/} to the others.
     */
    @Test
    void dotOrEmptySegmentsWithParametersAreAmbiguousAndNothingElseIs() {
        assertThat(List.of("/api/admin/..;/x", "/api/admin/%2e%2e;x/x", "/api/admin/.;x/../x", "/api/admin/;x/../x",
                "/api/admin/..%3Bx/x", "/api/admin/%252e%252e%253Bx/x", "/api/admin/..;", "/api/admin\\..;x\\x"))
                .allMatch(RequestPaths::isAmbiguous);
        assertThat(List.of("/api/admin/x", "/api/hello;v=1", "/api/a;b/c", "/api/x/../hello", "/api/%2e/hello",
                "/api/x%2F..%2Fhello", "/api/..x;v=1", "/", "")).noneMatch(RequestPaths::isAmbiguous);
    }

    @TestFactory
    Stream<DynamicTest> noSpellingOfAPlainPathIsAmbiguous() {
        return Property.forAll(spellings()).tries(2000)
                .check(spelled -> assertThat(RequestPaths.isAmbiguous(spelled.spelling())).as(spelled.spelling())
                        .isFalse());
    }

    /**
     * What is not refused as ambiguous reads as one path to both kinds of upstream: the normalised form has the
     * segments that an upstream without parameters (nginx, Go) serves, once their {@code ;parameters} are cut.
     */
    @TestFactory
    Stream<DynamicTest> aPathNotRefusedAsAmbiguousIsOnePathToUpstreamsWithAndWithoutParameters() {
        return Property.forAll(trickyPaths()).tries(5000).check(raw -> {
            if (!RequestPaths.isAmbiguous(raw)) {
                String normalised = RequestPaths.normalise(raw);
                assertThat(normalised.equals("/") ? List.of() : List.of(normalised.substring(1).split("/")))
                        .as(raw).isEqualTo(readWithoutParameters(raw));
            }
        });
    }

    private static Gen<String> trickyPaths() {
        return Gen.elements("/", "a", "b", ".", "..", ";", ";v=1", "%3B", "%2F", "%2e", "%2E%2e", "%252e", "%5C",
                "\\", "%253B", "%252F", "%25").list(0, 9).map(pieces -> "/" + String.join("", pieces));
    }

    /**
     * The path as nginx or Go's net/http serve it: decoded (as often as the limiter decodes), dot segments applied,
     * ';' a character like any other; then each segment cut at its ';' and the empty and "." ones left out.
     */
    private static List<String> readWithoutParameters(String raw) {
        String path = raw;
        for (int round = 0; round < RequestPaths.MAX_ROUNDS; round++) {
            java.util.ArrayList<String> segments = new java.util.ArrayList<>();
            for (String segment : String.join("/", java.util.Arrays.stream(path.split("[/\\\\]", -1))
                    .map(RequestPaths::decode).toList()).split("[/\\\\]")) {
                if (segment.equals("..")) {
                    if (!segments.isEmpty()) {
                        segments.remove(segments.size() - 1);
                    }
                }
                else if (!segment.isEmpty() && !segment.equals(".")) {
                    segments.add(segment);
                }
            }
            String next = "/" + String.join("/", segments);
            if (next.equals(path)) {
                break;
            }
            path = next;
        }
        java.util.ArrayList<String> names = new java.util.ArrayList<>();
        for (String segment : path.split("/")) {
            String name = segment.indexOf(';') < 0 ? segment : segment.substring(0, segment.indexOf(';'));
            if (!name.isEmpty() && !name.equals(".")) {
                names.add(name);
            }
        }
        return names;
    }

    @TestFactory
    Stream<DynamicTest> anySpellingOfAPathNormalisesToThePath() {
        return Property.forAll(spellings()).tries(5000)
                .check(spelled -> assertThat(RequestPaths.normalise(spelled.spelling())).as(spelled.spelling())
                        .isEqualTo(spelled.path()));
    }

    @TestFactory
    Stream<DynamicTest> anyPathNormalisesToOneWithoutTricksAndStaysThere() {
        return Property.forAll(anyPath()).tries(5000).check(raw -> {
            String normalised = RequestPaths.normalise(raw);
            assertThat(normalised).startsWith("/").doesNotContain("//", ";", "\\");
            assertThat(("/" + normalised + "/").contains("/./") || ("/" + normalised + "/").contains("/../"))
                    .isFalse();
            assertThat(normalised.length() == 1 || !normalised.endsWith("/")).isTrue();
            assertThat(RequestPaths.normalise(normalised)).isEqualTo(normalised);
        });
    }

    private static Gen<String> anyPath() {
        return Gen.oneOf(Gen.strings(Gen.unicodeChar(), 0, 120), Gen.strings("/.;%\\aA2eEfF5cC", 0, 60));
    }

    private static Gen<Spelled> spellings() {
        // "." and ".." are dot segments, not names: no spelling of a path holds them
        Gen<List<String>> segments = Gen.strings("abcXYZ019-_~é", 1, 6)
                .filter(segment -> !segment.equals(".") && !segment.equals("..")).list(1, 5);
        return Gen.zip(segments, Gen.longs(Long.MIN_VALUE, Long.MAX_VALUE), (parts, seed) -> {
            java.util.Random random = new java.util.Random(seed);
            StringBuilder spelling = new StringBuilder();
            for (String part : parts) {
                spelling.append(random.nextInt(4) == 0 ? "//" : random.nextInt(6) == 0 ? "\\" : "/");
                if (random.nextInt(5) == 0) {
                    spelling.append(random.nextBoolean() ? "./" : "junk/../");
                }
                spelling.append(random.nextInt(3) == 0 ? encodeSome(part, random) : part);
                if (random.nextInt(5) == 0) {
                    spelling.append(";v=").append(random.nextInt(100));
                }
            }
            if (random.nextInt(4) == 0) {
                spelling.append(random.nextBoolean() ? "/" : "/.");
            }
            return new Spelled("/" + String.join("/", parts), spelling.toString());
        });
    }

    private static String encodeSome(String part, java.util.Random random) {
        StringBuilder encoded = new StringBuilder();
        for (byte b : part.getBytes(StandardCharsets.UTF_8)) {
            boolean ascii = b >= 0;
            if (!ascii || random.nextBoolean()) {
                String hex = String.format("%%%02X", b & 0xff);
                encoded.append(random.nextBoolean() ? hex : hex.toLowerCase(Locale.ROOT));
            }
            else {
                encoded.append((char) b);
            }
        }
        return encoded.toString();
    }
}

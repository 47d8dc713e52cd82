package dev.ratelimiter.core;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The path a rule's {@code match-paths} is matched against: the request path as the upstream will most likely
 * understand it, not as the client spelled it. Otherwise a cap on {@code /api/hello} is dodged by {@code /api//hello},
 * {@code /api/./hello}, {@code /api/x/../hello}, {@code /api/hello;v=1}, {@code /api/hell%6F} or {@code /api/hello/},
 * which the gateway routes and most upstreams serve as {@code /api/hello}.
 *
 * <p>Each segment loses its {@code ;parameters} and is percent-decoded (UTF-8; a malformed escape is kept as written);
 * then the path is split again on {@code /} and {@code \} (so an encoded slash separates too), empty and {@code .}
 * segments are dropped and {@code ..} removes the one before it (never above the root); no trailing slash; repeated
 * while anything changes (a few rounds), so that doubly encoded tricks fare no better. Case is kept here and ignored
 * by the matching ({@link PathPattern}).
 */
public final class RequestPaths {

    /** Most decoding rounds: more levels of encoding than this are not a spelling any server undoes. */
    static final int MAX_ROUNDS = 16;

    private RequestPaths() {
    }

    /** The normalised form of a raw request path ({@code null} and "" give "/"). */
    public static String normalise(String raw) {
        if (raw == null || raw.isEmpty()) {
            return "/";
        }
        if (isPlain(raw)) {
            return raw;
        }
        List<String> rounds = rounds(raw);
        return rounds.get(rounds.size() - 1);
    }

    /**
     * The path as each decoding round takes it, and as the last one leaves it (the normalised form). Never cut: a cut
     * path could end inside a "../" run and land outside the rule's path; the server's limit on the request line (4 KB
     * by default) bounds the work. Until nothing changes: a doubly encoded "%252e%252e" is a ".." to an upstream or a
     * proxy behind it that decodes once more, so it is one here too. Each round that changes the path shortens it or
     * drops segments; the cap only bounds the work an attacker's path can cost.
     */
    private static List<String> rounds(String raw) {
        List<String> rounds = new ArrayList<>(3);
        String path = raw;
        rounds.add(path);
        for (int round = 0; round < MAX_ROUNDS && !isPlain(path); round++) {
            String next = once(path);
            if (next.equals(path)) {
                break;
            }
            path = next;
            rounds.add(path);
        }
        return rounds;
    }

    /**
     * Whether upstreams read this raw path as different paths: a segment whose {@code ;parameters} hide a dot segment
     * ({@code /api/admin/..;/x}, {@code %2e%2e;x}, {@code .;x/..}, {@code ;x/..}, {@code %2F..;x}) or a separator
     * ({@code a;%2F..}), spelled out or percent-encoded at any depth. Servlet containers (Tomcat, Jetty, Spring's own
     * matching) drop the parameters first and apply the dot segment: {@code /api/x}. nginx, Go's {@code net/http} and
     * Express know no parameters: {@code ..;} is a name like any other, and the request stays under
     * {@code /api/admin/}. The normalised form can follow one of the two only, and the other then escapes a cap on its
     * path; no client that means well sends such a segment (browsers and HTTP libraries never make one, and Spring
     * Security's firewall refuses every {@code ;}), so the limiter refuses the request instead of choosing.
     */
    public static boolean isAmbiguous(String raw) {
        if (raw == null || raw.indexOf(';') < 0 && raw.indexOf('%') < 0 && raw.indexOf('\\') < 0) {
            return false;
        }
        if (hidesDotSegment(raw)) {
            return true;
        }
        for (String path : rounds(raw)) {
            for (String segment : path.split("[/\\\\]", -1)) {
                int parameters = segment.indexOf(';');
                if (parameters >= 0 && (endsInDotOrEmpty(decodeFully(segment.substring(0, parameters)))
                        || hasSeparator(decodeFully(segment.substring(parameters))))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Whether the normalised form finds a {@code ..} segment where an upstream that decodes once and separates on {@code /}
     * only sees a name: a doubly encoded {@code %252e%252e} (nginx, Go, Express and Tomcat all decode once and pass on
     * {@code %2e%2e}), or a backslash ({@code ..%5Cx}, {@code ..\x}: a name character to them on Unix, a separator to
     * the normalised form, which a Windows upstream would follow). The normalised form applies such a segment, and the
     * request would escape a cap on the path those upstreams serve it under.
     */
    private static boolean hidesDotSegment(String raw) {
        for (String segment : decode(raw).split("/", -1)) {
            if (segment.equals(".") || segment.equals("..")) {
                continue;
            }
            for (String piece : decodeFully(segment).split("[/\\\\]", -1)) {
                int parameters = piece.indexOf(';');
                String name = parameters < 0 ? piece : piece.substring(0, parameters);
                // ".." only: it takes the segment before it away, and the normalised form then misses part of the
                // path the upstream serves (a hidden "." only drops itself: the normalised form keeps every name)
                if (name.equals("..")) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether the last segment of a name (a decoded name may hold separators) is empty, "." or "..". */
    private static boolean endsInDotOrEmpty(String name) {
        int separator = Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\'));
        String last = name.substring(separator + 1);
        return last.isEmpty() || last.equals(".") || last.equals("..");
    }

    private static boolean hasSeparator(String text) {
        return text.indexOf('/') >= 0 || text.indexOf('\\') >= 0;
    }

    /** Percent-decoded until nothing changes (at most {@value #MAX_ROUNDS} times), as the rounds of a path are. */
    private static String decodeFully(String text) {
        String decoded = text;
        for (int round = 0; round < MAX_ROUNDS && decoded.indexOf('%') >= 0; round++) {
            String next = decode(decoded);
            if (next.equals(decoded)) {
                break;
            }
            decoded = next;
        }
        return decoded;
    }

    private static String once(String path) {
        StringBuilder decoded = new StringBuilder(path.length());
        for (String segment : path.split("[/\\\\]", -1)) {
            int parameters = segment.indexOf(';');
            decoded.append('/').append(decode(parameters < 0 ? segment : segment.substring(0, parameters)));
        }
        List<String> segments = new ArrayList<>();
        for (String segment : decoded.toString().split("[/\\\\]")) {
            if (segment.isEmpty() || segment.equals(".")) {
                continue;
            }
            if (segment.equals("..")) {
                if (!segments.isEmpty()) {
                    segments.remove(segments.size() - 1);
                }
                continue;
            }
            segments.add(segment);
        }
        return segments.isEmpty() ? "/" : "/" + String.join("/", segments);
    }

    /** Starts with '/', has no '%', ';', '\', empty, "." or ".." segment, and no trailing '/'. */
    private static boolean isPlain(String path) {
        if (path.charAt(0) != '/' || path.length() > 1 && path.charAt(path.length() - 1) == '/') {
            return path.equals("/");
        }
        int segmentStart = 1;
        for (int i = 1; i <= path.length(); i++) {
            char c = i < path.length() ? path.charAt(i) : '/';
            if (c == '%' || c == ';' || c == '\\') {
                return false;
            }
            if (c == '/') {
                int length = i - segmentStart;
                if (length == 0 || length == 1 && path.charAt(segmentStart) == '.'
                        || length == 2 && path.charAt(segmentStart) == '.' && path.charAt(segmentStart + 1) == '.') {
                    return false;
                }
                segmentStart = i + 1;
            }
        }
        return true;
    }

    /** One round of percent-decoding (UTF-8); a malformed escape is kept as written. */
    static String decode(String segment) {
        if (segment.indexOf('%') < 0) {
            return segment;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(segment.length());
        for (int i = 0; i < segment.length(); i++) {
            char c = segment.charAt(i);
            int high = c == '%' && i + 2 < segment.length() ? Character.digit(segment.charAt(i + 1), 16) : -1;
            int low = high >= 0 ? Character.digit(segment.charAt(i + 2), 16) : -1;
            if (high >= 0 && low >= 0) {
                bytes.write(high * 16 + low);
                i += 2;
            }
            else {
                int codePoint = segment.codePointAt(i);
                byte[] literal = new String(Character.toChars(codePoint)).getBytes(StandardCharsets.UTF_8);
                bytes.write(literal, 0, literal.length);
                i += Character.charCount(codePoint) - 1;
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}

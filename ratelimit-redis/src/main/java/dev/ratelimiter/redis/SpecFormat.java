package dev.ratelimiter.redis;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * A rule spec as text: one {@code name=value} line per setting, sorted, with {@code \}, newlines and carriage
 * returns escaped in values. Plain enough to read and fix with {@code redis-cli}.
 */
final class SpecFormat {

    private SpecFormat() {
    }

    static String write(Map<String, String> spec) {
        StringBuilder text = new StringBuilder();
        new TreeMap<>(spec).forEach((name, value) -> text.append(name).append('=').append(escape(value)).append('\n'));
        return text.toString();
    }

    static Map<String, String> read(String text) {
        Map<String, String> spec = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int equals = line.indexOf('=');
            if (equals > 0) {
                spec.put(line.substring(0, equals), unescape(line.substring(equals + 1)));
            }
        }
        return spec;
    }

    private static String escape(String value) {
        return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r");
    }

    private static String unescape(String value) {
        StringBuilder out = new StringBuilder(value.length());
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\\' && i + 1 < value.length()) {
                char next = value.charAt(++i);
                out.append(next == 'n' ? '\n' : next == 'r' ? '\r' : next);
            }
            else {
                out.append(c);
            }
        }
        return out.toString();
    }
}

package dev.ratelimiter.core;

import java.util.Arrays;
import java.util.Map;

/** JSON string literals, written by hand where a mapper would be a dependency for one small object. */
public final class JsonText {

    private JsonText() {
    }

    /** {@code text} as a JSON string literal, quotes included. */
    public static String quote(String text) {
        StringBuilder json = new StringBuilder(text.length() + 2);
        quote(json, text);
        return json.toString();
    }

    /**
     * Appends {@code ,"name":"value"}, a field after the first of an object, or nothing when {@code value} is null (an
     * absent field, not a JSON null).
     */
    public static void field(StringBuilder json, String name, String value) {
        if (value != null) {
            json.append(",\"").append(name).append("\":");
            quote(json, value);
        }
    }

    /**
     * {@code value} as JSON: maps (keys as strings, in their order), collections and arrays, strings, numbers (a
     * non-finite one as {@code null}, which JSON has no literal for), booleans and {@code null}; anything else as the
     * string of its {@code toString()}.
     */
    public static String value(Object value) {
        StringBuilder json = new StringBuilder(256);
        value(json, value);
        return json.toString();
    }

    /** Appends {@code value} as JSON; see {@link #value(Object)}. */
    public static void value(StringBuilder json, Object value) {
        if (value == null || value instanceof Boolean) {
            json.append(value);
        }
        else if (value instanceof Number number) {
            boolean finite = !(number instanceof Double || number instanceof Float)
                    || Double.isFinite(number.doubleValue());
            json.append(finite ? number : null);
        }
        else if (value instanceof Map<?, ?> map) {
            json.append('{');
            String separator = "";
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                json.append(separator);
                quote(json, String.valueOf(entry.getKey()));
                json.append(':');
                value(json, entry.getValue());
                separator = ",";
            }
            json.append('}');
        }
        else if (value instanceof Iterable<?> || value instanceof Object[]) {
            Iterable<?> items = value instanceof Object[] array ? Arrays.asList(array) : (Iterable<?>) value;
            json.append('[');
            String separator = "";
            for (Object item : items) {
                json.append(separator);
                value(json, item);
                separator = ",";
            }
            json.append(']');
        }
        else {
            quote(json, value.toString());
        }
    }

    /**
     * Appends {@code text} as a JSON string literal: quotes, backslashes, control characters and the characters some
     * readers take for line breaks (DEL, NEL, U+2028, U+2029) escaped, so the literal always stays on one line.
     */
    public static void quote(StringBuilder json, String text) {
        json.append('"');
        // Runs without anything to escape are copied whole: most text has nothing to escape, and a char-by-char copy
        // costs more than the rest of a refusal's body.
        int run = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            // control characters, DEL, and the line and paragraph separators some log viewers break on
            boolean control = c < 0x20 || c == 0x7f || c == 0x85 || c == 0x2028 || c == 0x2029;
            if (c == '"' || c == '\\' || control) {
                json.append(text, run, i);
                if (control) {
                    json.append(String.format("\\u%04x", (int) c));
                }
                else {
                    json.append('\\').append(c);
                }
                run = i + 1;
            }
        }
        json.append(text, run, text.length()).append('"');
    }
}

package dev.ratelimiter.gateway;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Finds a number at a dotted path of object members ({@code usage.total_tokens}) in a JSON body as its bytes pass, in
 * chunks cut anywhere, without keeping the body: the memory is one flag per level of nesting (up to
 * {@value #MAX_DEPTH}), the bytes of one number, and a position in the member name being compared. Strings (escaped
 * quotes and braces included) are skipped, arrays and members off the path are walked past.
 *
 * <p>Server-sent events, as LLM APIs stream with {@code stream: true}: the body is lines of {@code data: {...}} with
 * the usage in the last event. Bytes outside a JSON object ({@code data: }, {@code [DONE]}, {@code event:} lines) are
 * skipped, and in an event stream ({@link #eventStream()}) a line break ends whatever object was open: an event's JSON
 * is one line. The last value found wins: streamed chunks carry {@code "usage": null} until the final one.
 *
 * <p>Not thread-safe: a response's bytes arrive in order, one chunk at a time.
 */
public final class JsonFieldScanner {

    static final int MAX_DEPTH = 64;
    private static final int MAX_NUMBER = 40;

    private final byte[][] path;
    private final boolean eventStream;

    private int depth;
    /** Per level (1-based, up to MAX_DEPTH): whether it is an object; whether the path leads to it; whether its
     * current member's name is the path's next. */
    private final boolean[] object = new boolean[MAX_DEPTH + 2];
    private final boolean[] reached = new boolean[MAX_DEPTH + 2];
    private final boolean[] memberOnPath = new boolean[MAX_DEPTH + 2];
    /** In an object: whether the next string is a member name (after '{' or ','). */
    private boolean expectName;
    private boolean inString;
    private boolean escaped;
    private boolean stringIsName;
    /** While a member name is read: how many bytes of the path's name matched so far, -1 once it cannot match. */
    private int nameMatched;
    private final byte[] number = new byte[MAX_NUMBER];
    private int numberLength = -1;
    private boolean numberTooLong;
    private boolean numberSought;
    private Long found;

    /**
     * @param path the members to descend, {@code [usage, total_tokens]}
     * @param eventStream whether the body is {@code text/event-stream}: each line then stands alone
     */
    public JsonFieldScanner(List<String> path, boolean eventStream) {
        this.path = new byte[path.size()][];
        for (int i = 0; i < path.size(); i++) {
            this.path[i] = path.get(i).getBytes(StandardCharsets.UTF_8);
        }
        this.eventStream = eventStream;
    }

    /** Whether the body is read as server-sent events. */
    public boolean eventStream() {
        return eventStream;
    }

    /** The last whole number found at the path (a fraction rounded up), or null. */
    public Long found() {
        return found;
    }

    /** Reads {@code length} bytes of {@code bytes} from {@code offset}. */
    public void feed(byte[] bytes, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            feed(bytes[i]);
        }
    }

    /** Reads one byte of the body. */
    public void feed(byte b) {
        if (eventStream && (b == '\n' || b == '\r')) {
            if (numberLength >= 0) {
                endNumber();
            }
            depth = 0;
            inString = false;
            return;
        }
        if (inString) {
            string(b);
            return;
        }
        if (numberLength >= 0) {
            if (isScalar(b)) {
                if (numberLength < MAX_NUMBER) {
                    number[numberLength++] = b;
                }
                else {
                    numberTooLong = true;
                }
                return;
            }
            endNumber();
        }
        if (depth == 0) {
            if (b == '{') {
                open(true);
            }
            return;
        }
        switch (b) {
            case '{' -> open(true);
            case '[' -> open(false);
            case '}', ']' -> close();
            case '"' -> {
                inString = true;
                escaped = false;
                stringIsName = expectName && isObject();
                nameMatched = stringIsName && isReached() && depth <= path.length ? 0 : -1;
            }
            case ',' -> {
                expectName = isObject();
                if (depth <= MAX_DEPTH) {
                    memberOnPath[depth] = false;
                }
            }
            default -> {
                if (isScalar(b)) {
                    numberLength = 0;
                    numberTooLong = false;
                    numberSought = isObject() && isReached() && depth <= MAX_DEPTH && memberOnPath[depth]
                            && depth == path.length;
                    number[numberLength++] = b;
                }
            }
        }
    }

    private boolean isObject() {
        return depth >= 1 && depth <= MAX_DEPTH && object[depth];
    }

    private boolean isReached() {
        return depth >= 1 && depth <= MAX_DEPTH && reached[depth];
    }

    private void open(boolean isObject) {
        // the root object is where the path starts; an object deeper is on it when its member's name was the path's
        boolean onPath = depth == 0 || isObject() && isReached() && memberOnPath[depth] && depth < path.length;
        depth++;
        if (depth <= MAX_DEPTH) {
            object[depth] = isObject;
            reached[depth] = isObject && onPath;
            memberOnPath[depth] = false;
        }
        expectName = isObject;
    }

    private void close() {
        depth--;
        expectName = false;
    }

    private void string(byte b) {
        if (escaped) {
            escaped = false;
            nameMatched = -1; // an escaped name is compared as written: the names sought have no escapes
            return;
        }
        if (b == '\\') {
            escaped = true;
            return;
        }
        if (b == '"') {
            inString = false;
            if (stringIsName) {
                expectName = false;
                if (depth <= MAX_DEPTH) {
                    memberOnPath[depth] = nameMatched >= 0 && nameMatched == path[depth - 1].length;
                }
            }
            return;
        }
        if (nameMatched >= 0) {
            byte[] name = path[depth - 1];
            nameMatched = nameMatched < name.length && name[nameMatched] == b ? nameMatched + 1 : -1;
        }
    }

    private void endNumber() {
        if (numberSought && !numberTooLong) {
            Long value = parse(new String(number, 0, numberLength, StandardCharsets.US_ASCII));
            if (value != null) {
                found = value;
            }
        }
        numberLength = -1;
    }

    private static Long parse(String text) {
        try {
            double value = Double.parseDouble(text);
            if (Double.isNaN(value) || Double.isInfinite(value) || value < 0) {
                return null;
            }
            return (long) Math.min(Long.MAX_VALUE, Math.ceil(value));
        }
        catch (NumberFormatException ex) {
            return null; // true, false, null, or no number at all
        }
    }

    private static boolean isScalar(byte b) {
        return b != ' ' && b != '\t' && b != '\n' && b != '\r' && b != ',' && b != ':' && b != '{' && b != '}'
                && b != '[' && b != ']' && b != '"';
    }
}

package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Finds one whole HTTP/1.1 answer at the start of a buffer, for the load generators: how long it is, its status, and
 * whether the server closes the connection after it. The body ({@code Content-Length} or chunked) is skipped, not
 * kept. Re-parsing a partial answer from its start when more bytes arrive is cheap: the gateway's answers are a few
 * hundred bytes.
 */
final class HttpAnswerParser {

    /** What {@link #parse} found; one per connection, reused. */
    int length;
    int status;
    boolean closes;

    /**
     * Looks for a whole answer in {@code bytes[from, to)}.
     *
     * @return whether one is there (then {@link #length}, {@link #status} and {@link #closes} describe it)
     * @throws IOException when the bytes are not an HTTP/1.x answer
     */
    boolean parse(byte[] bytes, int from, int to) throws IOException {
        int headEnd = indexOf(bytes, from, to, "\r\n\r\n");
        if (headEnd < 0) {
            if (to - from >= 5 && !startsWith(bytes, from, to, "HTTP/")) {
                throw new IOException("not an HTTP answer: " + text(bytes, from, Math.min(to, from + 40)));
            }
            return false;
        }
        int lineEnd = indexOf(bytes, from, headEnd + 2, "\r\n");
        if (!startsWith(bytes, from, lineEnd, "HTTP/1.") || lineEnd - from < 12) {
            throw new IOException("no HTTP status line: " + text(bytes, from, lineEnd));
        }
        status = digit(bytes[from + 9]) * 100 + digit(bytes[from + 10]) * 10 + digit(bytes[from + 11]);
        boolean close = bytes[from + 7] == '0';
        long contentLength = -1;
        boolean chunked = false;
        for (int line = lineEnd + 2; line < headEnd; ) {
            int end = indexOf(bytes, line, headEnd + 2, "\r\n");
            int colon = indexOf(bytes, line, end, ":");
            if (colon > 0) {
                String value = text(bytes, colon + 1, end).trim();
                if (nameIs(bytes, line, colon, "content-length")) {
                    contentLength = Long.parseLong(value);
                }
                else if (nameIs(bytes, line, colon, "transfer-encoding")) {
                    chunked = value.toLowerCase().contains("chunked");
                }
                else if (nameIs(bytes, line, colon, "connection")) {
                    close = value.equalsIgnoreCase("close");
                }
            }
            line = end + 2;
        }
        int bodyStart = headEnd + 4;
        int end;
        if (status == 204 || status == 304 || status / 100 == 1) {
            end = bodyStart;
        }
        else if (chunked) {
            end = chunkedEnd(bytes, bodyStart, to);
        }
        else if (contentLength >= 0) {
            end = bodyStart + contentLength <= to ? (int) (bodyStart + contentLength) : -1;
        }
        else {
            throw new IOException("an answer without a length (read to the connection's end) is not supported");
        }
        if (end < 0) {
            return false;
        }
        length = end - from;
        closes = close;
        return true;
    }

    /** The end of a chunked body starting at {@code at}, or -1 when it has not all arrived. */
    private static int chunkedEnd(byte[] bytes, int at, int to) throws IOException {
        int position = at;
        while (true) {
            int sizeEnd = indexOf(bytes, position, to, "\r\n");
            if (sizeEnd < 0) {
                return -1;
            }
            String sizeText = text(bytes, position, sizeEnd);
            int extension = sizeText.indexOf(';');
            long size;
            try {
                size = Long.parseLong((extension < 0 ? sizeText : sizeText.substring(0, extension)).trim(), 16);
            }
            catch (NumberFormatException ex) {
                throw new IOException("bad chunk size: " + sizeText, ex);
            }
            if (size == 0) {
                // trailers, none expected, then an empty line
                int trailer = sizeEnd + 2;
                while (true) {
                    int lineEnd = indexOf(bytes, trailer, to, "\r\n");
                    if (lineEnd < 0) {
                        return -1;
                    }
                    if (lineEnd == trailer) {
                        return lineEnd + 2;
                    }
                    trailer = lineEnd + 2;
                }
            }
            long next = sizeEnd + 2 + size + 2;
            if (next > to) {
                return -1;
            }
            position = (int) next;
        }
    }

    private static int digit(byte b) throws IOException {
        if (b < '0' || b > '9') {
            throw new IOException("bad status digit " + (char) b);
        }
        return b - '0';
    }

    private static boolean nameIs(byte[] bytes, int from, int colon, String name) {
        int end = colon;
        while (end > from && bytes[end - 1] == ' ') {
            end--;
        }
        if (end - from != name.length()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            if (Character.toLowerCase((char) bytes[from + i]) != name.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean startsWith(byte[] bytes, int from, int to, String prefix) {
        if (to - from < prefix.length()) {
            return false;
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (bytes[from + i] != prefix.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] bytes, int from, int to, String what) {
        int last = to - what.length();
        for (int i = from; i <= last; i++) {
            if (bytes[i] == what.charAt(0) && startsWith(bytes, i, to, what)) {
                return i;
            }
        }
        return -1;
    }

    private static String text(byte[] bytes, int from, int to) {
        return new String(bytes, from, Math.max(0, to - from), StandardCharsets.ISO_8859_1);
    }
}

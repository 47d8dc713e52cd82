package dev.ratelimiter.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Just enough RESP to send one command and read its reply, so fixtures can probe and reset a server
 * without depending on a Redis client library (tests bring their own client to test the product with).
 */
final class RedisProtocol {

    /** How long a fixture's command may take to connect, and then to be answered. */
    static final int COMMAND_TIMEOUT_MILLIS = 2_000;

    private RedisProtocol() {
    }

    /**
     * {@link #send} as a server fixture's {@code command(...)} does it: the fixtures' timeout, and a failure (a
     * Redis error reply included) as an unchecked exception naming the command.
     */
    static String command(String host, int port, String... arguments) {
        try {
            return send(host, port, COMMAND_TIMEOUT_MILLIS, arguments);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Redis command " + String.join(" ", arguments) + " failed", ex);
        }
    }

    /**
     * Sends one command and returns the reply as text: simple strings, integers and bulk strings as they are,
     * arrays (also nested ones) as their elements each followed by a newline.
     */
    static String send(String host, int port, int timeoutMillis, String... arguments) throws IOException {
        return flatten(call(host, port, timeoutMillis, arguments));
    }

    /**
     * Sends one command and returns the reply with its structure kept, for replies that nest
     * (ROLE, SENTINEL REPLICAS): a {@code String} for simple strings, integers and bulk strings,
     * a {@code List<Object>} for arrays (empty for a nil array), {@code null} for a nil bulk string.
     */
    static Object call(String host, int port, int timeoutMillis, String... arguments) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            OutputStream out = socket.getOutputStream();
            out.write(encode(arguments));
            out.flush();
            return readReply(socket.getInputStream());
        }
    }

    private static String flatten(Object reply) {
        if (!(reply instanceof List<?> elements)) {
            return (String) reply;
        }
        StringBuilder joined = new StringBuilder();
        for (Object element : elements) {
            joined.append(flatten(element)).append('\n');
        }
        return joined.toString();
    }

    private static byte[] encode(String... arguments) {
        StringBuilder request = new StringBuilder("*").append(arguments.length).append("\r\n");
        for (String argument : arguments) {
            byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
            request.append('$').append(bytes.length).append("\r\n").append(argument).append("\r\n");
        }
        return request.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static Object readReply(InputStream in) throws IOException {
        String line = readLine(in);
        if (line.isEmpty()) {
            throw new IOException("empty reply");
        }
        char type = line.charAt(0);
        String rest = line.substring(1);
        switch (type) {
            case '+', ':' -> {
                return rest;
            }
            case '-' -> throw new IOException("Redis error: " + rest);
            case '$' -> {
                int length = Integer.parseInt(rest);
                if (length < 0) {
                    return null;
                }
                byte[] bulk = in.readNBytes(length + 2);
                return new String(bulk, 0, length, StandardCharsets.UTF_8);
            }
            case '*' -> {
                int count = Integer.parseInt(rest);
                if (count < 0) {
                    // A nil array reads as an empty one, as send() has always rendered it.
                    return List.of();
                }
                List<Object> elements = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    elements.add(readReply(in));
                }
                return elements;
            }
            default -> throw new IOException("unexpected reply: " + line);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int previous = -1;
        while (true) {
            int next = in.read();
            if (next < 0) {
                throw new IOException("connection closed before the reply ended");
            }
            if (previous == '\r' && next == '\n') {
                byte[] bytes = line.toByteArray();
                return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
            }
            line.write(next);
            previous = next;
        }
    }
}

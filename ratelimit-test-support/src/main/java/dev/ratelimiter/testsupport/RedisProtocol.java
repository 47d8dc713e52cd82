package dev.ratelimiter.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * Just enough RESP to send one command and read its reply, so fixtures can probe and reset a server
 * without depending on a Redis client library (tests bring their own client to test the product with).
 */
final class RedisProtocol {

    private RedisProtocol() {
    }

    static String send(String host, int port, int timeoutMillis, String... arguments) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            OutputStream out = socket.getOutputStream();
            out.write(encode(arguments));
            out.flush();
            return readReply(socket.getInputStream());
        }
    }

    private static byte[] encode(String... arguments) {
        StringBuilder request = new StringBuilder("*").append(arguments.length).append("\r\n");
        for (String argument : arguments) {
            byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
            request.append('$').append(bytes.length).append("\r\n").append(argument).append("\r\n");
        }
        return request.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String readReply(InputStream in) throws IOException {
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
                StringBuilder joined = new StringBuilder();
                for (int i = 0; i < count; i++) {
                    joined.append(readReply(in)).append('\n');
                }
                return joined.toString();
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

package dev.ratelimiter.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * Sends one HTTP/1.1 request as raw bytes and returns the status code: the only way to put control
 * characters or raw non-ASCII bytes into a header, which well-behaved HTTP clients refuse to send.
 */
final class RawHttp {

    private RawHttp() {
    }

    /** A GET with the given header lines ({@code "Name: value"}), in order, repeated names included. */
    static int get(int port, String path, String... headerLines) throws IOException {
        StringBuilder lines = new StringBuilder("1");
        for (String line : headerLines) {
            lines.append("\r\n").append(line);
        }
        return get(port, path, "X-Raw", lines.toString().getBytes(StandardCharsets.UTF_8));
    }

    static int get(int port, String path, String headerName, byte[] headerValue) throws IOException {
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headerName + ": ")
                .getBytes(StandardCharsets.US_ASCII));
        request.write(headerValue);
        request.write("\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return exchange(port, request.toByteArray());
    }

    /**
     * Any method on a path sent exactly as given (no client normalises or re-encodes it), with a JSON body and the
     * given header lines.
     */
    static int send(int port, String method, String path, String jsonBody, String... headerLines) throws IOException {
        StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Connection: close\r\nContent-Type: application/json\r\n");
        for (String line : headerLines) {
            head.append(line).append("\r\n");
        }
        byte[] body = jsonBody.getBytes(StandardCharsets.UTF_8);
        head.append("Content-Length: ").append(body.length).append("\r\n\r\n");
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.write(head.toString().getBytes(StandardCharsets.UTF_8));
        request.write(body);
        return exchange(port, request.toByteArray());
    }

    private static int exchange(int port, byte[] request) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            out.write(request);
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder statusLine = new StringBuilder();
            int c;
            while ((c = in.read()) != -1 && c != '\n') {
                statusLine.append((char) c);
            }
            String[] parts = statusLine.toString().split(" ");
            if (parts.length < 2) {
                throw new IOException("no HTTP status line, got '" + statusLine + "'");
            }
            return Integer.parseInt(parts[1]);
        }
    }
}

package dev.ratelimiter.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 answer read off a raw socket, for tests that need what a client library hides or normalises: a path
 * sent exactly as written, a body the server does not read, the same connection reused after a refused request,
 * {@code Connection: close}.
 *
 * @param status the status code
 * @param headers the headers, by lower-case name (the last of a repeated one)
 * @param body the body as UTF-8
 */
public record RawResponse(int status, Map<String, String> headers, String body) {

    /** Whether the server said it closes the connection after this answer. */
    public boolean closes() {
        return "close".equalsIgnoreCase(headers.get("connection"));
    }

    /** Sends one request on a connection of its own to 127.0.0.1:{@code port}, closed after the answer. */
    public static RawResponse send(int port, String method, String path, String type, byte[] body, String... headerLines)
            throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
            socket.setSoTimeout(15_000);
            return exchange(socket, request(method, path, type, body, true, headerLines));
        }
    }

    /**
     * A request as bytes, the path as written; a Content-Length body (none when empty, unless a PUT or POST);
     * {@code Host: 127.0.0.1} unless a header line gives another.
     *
     * @param close whether to ask the server to close the connection after answering
     */
    public static byte[] request(String method, String path, String type, byte[] body, boolean close,
            String... headerLines) {
        boolean host = false;
        for (String line : headerLines) {
            host |= line.regionMatches(true, 0, "Host:", 0, 5);
        }
        StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\n"
                + (host ? "" : "Host: 127.0.0.1\r\n"));
        if (close) {
            head.append("Connection: close\r\n");
        }
        if (type != null) {
            head.append("Content-Type: ").append(type).append("\r\n");
        }
        for (String line : headerLines) {
            head.append(line).append("\r\n");
        }
        if (body.length > 0 || method.equals("PUT") || method.equals("POST")) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.writeBytes(head.toString().getBytes(StandardCharsets.UTF_8));
        request.writeBytes(body);
        return request.toByteArray();
    }

    /** Writes the request and reads one answer (Content-Length or chunked; HEAD and 204/304 have no body). */
    public static RawResponse exchange(Socket socket, byte[] request) throws IOException {
        OutputStream out = socket.getOutputStream();
        try {
            out.write(request);
            out.flush();
        }
        catch (IOException ex) {
            // the server may answer and close before the whole body is sent: read what it said
        }
        return read(socket, new String(request, 0, Math.min(5, request.length), StandardCharsets.US_ASCII)
                .startsWith("HEAD"));
    }

    /**
     * Reads one answer from the socket, whatever is being sent on it meanwhile (a body still on its way).
     *
     * @param head whether it answers a HEAD request (then it has no body)
     */
    public static RawResponse read(Socket socket, boolean head) throws IOException {
        InputStream in = socket.getInputStream();
        String statusLine = line(in);
        String[] parts = statusLine.split(" ");
        if (parts.length < 2) {
            throw new IOException("no HTTP status line, got '" + statusLine + "'");
        }
        int status = Integer.parseInt(parts[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String header = line(in); !header.isEmpty(); header = line(in)) {
            int colon = header.indexOf(':');
            headers.put(header.substring(0, colon).trim().toLowerCase(Locale.ROOT), header.substring(colon + 1).trim());
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (!head && status != 204 && status != 304) {
            if (headers.containsKey("content-length")) {
                body.writeBytes(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
            }
            else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
                for (int size = chunkSize(in); size > 0; size = chunkSize(in)) {
                    body.writeBytes(in.readNBytes(size));
                    line(in);
                }
                line(in);
            }
        }
        return new RawResponse(status, headers, body.toString(StandardCharsets.UTF_8));
    }

    private static int chunkSize(InputStream in) throws IOException {
        return Integer.parseInt(line(in).split(";")[0].trim(), 16);
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') {
                line.append((char) c);
            }
        }
        if (c == -1 && line.isEmpty()) {
            throw new IOException("connection closed");
        }
        return line.toString();
    }
}

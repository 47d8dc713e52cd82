package dev.ratelimiter.testsupport;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One HTTP/1.1 keep-alive connection to 127.0.0.1 on a blocking socket, for a client that waits for each answer: a
 * request is bytes built once, an answer is its status (the body is read and dropped, see {@link HttpAnswerParser}).
 * Reopened on the next exchange when the server closed it ({@code Connection: close}, Tomcat's keep-alive limit) or an
 * exchange failed. Not thread-safe: one per thread.
 */
final class KeepAliveConnection implements AutoCloseable {

    private static final int CONNECT_TIMEOUT_MILLIS = 5_000;

    private final int port;
    private final int readTimeoutMillis;
    private final HttpAnswerParser parser = new HttpAnswerParser();
    private byte[] buffer = new byte[16 * 1024];
    private int position;
    private int limit;
    private volatile Socket socket;
    private InputStream in;
    private OutputStream out;

    KeepAliveConnection(int port, int readTimeoutMillis) {
        this.port = port;
        this.readTimeoutMillis = readTimeoutMillis;
    }

    /** Header lines of {@code GET path} with {@code X-API-Key: apiKey}, keep-alive. */
    static byte[] get(String path, String apiKey) {
        return ("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + apiKey + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** Sends {@code request} and returns the answer's status; on failure the connection is closed and reopened next. */
    int exchange(byte[] request) throws IOException {
        try {
            if (socket == null) {
                open();
            }
            out.write(request);
            out.flush();
            return readAnswer();
        }
        catch (IOException | RuntimeException ex) {
            close();
            throw ex;
        }
    }

    private void open() throws IOException {
        Socket opened = new Socket();
        opened.setTcpNoDelay(true);
        opened.setSoTimeout(readTimeoutMillis);
        opened.connect(new InetSocketAddress("127.0.0.1", port), CONNECT_TIMEOUT_MILLIS);
        socket = opened;
        in = opened.getInputStream();
        out = opened.getOutputStream();
        position = 0;
        limit = 0;
    }

    private int readAnswer() throws IOException {
        while (!parser.parse(buffer, position, limit)) {
            if (limit == buffer.length) {
                if (position > 0) {
                    System.arraycopy(buffer, position, buffer, 0, limit - position);
                    limit -= position;
                    position = 0;
                }
                else {
                    buffer = Arrays.copyOf(buffer, buffer.length * 2);
                }
            }
            int read = in.read(buffer, limit, buffer.length - limit);
            if (read < 0) {
                throw new EOFException("the server closed the connection");
            }
            limit += read;
        }
        position += parser.length;
        if (position == limit) {
            position = 0;
            limit = 0;
        }
        if (parser.closes) {
            close();
        }
        return parser.status;
    }

    /** Closes the socket (idempotent); safe from another thread, where it ends a read in progress. */
    @Override
    public void close() {
        Socket open = socket;
        socket = null;
        if (open != null) {
            try {
                open.close();
            }
            catch (IOException ignored) {
                // closing
            }
        }
    }
}

package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP peer on a loopback port that never answers: what a client sees of a Redis behind a firewall that drops its
 * packets, or of a server hung so hard it cannot even accept. Two kinds:
 * <ul>
 * <li>{@link #acceptingSilently()}: connections are accepted and then nothing is ever read or written — a client's
 * handshake waits forever;</li>
 * <li>{@link #droppingConnections()}: the listen queue is full and never drained, so new connection attempts get no
 * answer at all (the kernel drops their SYNs) — a client's connect waits for its whole connect timeout.</li>
 * </ul>
 */
public final class BlackHole implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> held = new CopyOnWriteArrayList<>();
    private volatile boolean open = true;

    private BlackHole(boolean accept) {
        try {
            server = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
            if (accept) {
                Thread acceptor = new Thread(this::acceptForever, "black-hole-accept");
                acceptor.setDaemon(true);
                acceptor.start();
            }
            else {
                // Fill the listen queue with connections nobody accepts, until a connect is not answered any more.
                for (int i = 0; i < 8; i++) {
                    Socket filler = new Socket();
                    try {
                        filler.connect(new InetSocketAddress("127.0.0.1", server.getLocalPort()), 300);
                        held.add(filler);
                    }
                    catch (SocketTimeoutException full) {
                        filler.close();
                        return;
                    }
                }
                throw new IllegalStateException("the listen queue of port " + server.getLocalPort()
                        + " never filled up");
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Accepts every connection and never says a word. */
    public static BlackHole acceptingSilently() {
        return new BlackHole(true);
    }

    /** Never accepts, with a full listen queue: connection attempts go unanswered. */
    public static BlackHole droppingConnections() {
        return new BlackHole(false);
    }

    public int port() {
        return server.getLocalPort();
    }

    public String url() {
        return "redis://127.0.0.1:" + port();
    }

    private void acceptForever() {
        while (open) {
            try {
                held.add(server.accept());
            }
            catch (IOException ex) {
                if (!open) {
                    return;
                }
            }
        }
    }

    @Override
    public void close() {
        open = false;
        try {
            server.close();
        }
        catch (IOException ignored) {
            // closing anyway
        }
        for (Socket socket : held) {
            try {
                socket.close();
            }
            catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}

package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free TCP ports on 127.0.0.1 for child servers.
 *
 * <p>A Redis Cluster node also listens on its cluster bus port, which Redis 6.2 fixes at port + 10000
 * (there is no {@code cluster-port} option before 7.0), so cluster nodes need a pair of free ports. An
 * ephemeral port from the kernel is usually above 32768 and its bus port would be above 42768, where outgoing
 * connections take their local ports, or past 65535; pairs are therefore picked below the ephemeral range.
 *
 * <p>A port is only probed, not held, until its server binds it, and the kernel may offer the same port twice in a
 * row; so no port is handed out twice in one JVM (two free ports asked for one gateway, its server and its
 * management port, came back equal once in a few dozen starts on a loaded machine).
 */
public final class LoopbackPorts {

    static final String HOST = "127.0.0.1";
    static final int CLUSTER_BUS_OFFSET = 10_000;

    private static final int PAIR_LOWEST = 15_000;
    private static final int PAIR_HIGHEST = 22_500;
    private static final int ATTEMPTS = 200;
    /** Ports handed out in this JVM. */
    private static final Set<Integer> handedOut = new HashSet<>();
    /** Bound for the JVM's life so that nothing can listen on them: see {@link #refusing()}. */
    private static final List<Socket> heldClosed = new ArrayList<>();

    private LoopbackPorts() {
    }

    /** A port the kernel says is free right now, and not handed out before in this JVM. */
    public static synchronized int free() {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
                if (handedOut.add(socket.getLocalPort())) {
                    return socket.getLocalPort();
                }
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }
        throw new IllegalStateException("the kernel offered only ports handed out before, " + ATTEMPTS + " times");
    }

    /**
     * A port where every connection is refused for as long as this JVM runs: bound by a socket that never listens,
     * so no other server (another test's, on a shared machine) can take it, as one did a port that was only probed
     * free and answered a "connection refused" route with its own 503s.
     */
    public static synchronized int refusing() {
        Socket socket = new Socket();
        try {
            socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), 0));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        heldClosed.add(socket);
        handedOut.add(socket.getLocalPort());
        return socket.getLocalPort();
    }

    /** A port P such that both P and P + {@value #CLUSTER_BUS_OFFSET} are free and not handed out before. */
    static synchronized int freeWithClusterBus() {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(PAIR_LOWEST, PAIR_HIGHEST);
            if (!handedOut.contains(port) && !handedOut.contains(port + CLUSTER_BUS_OFFSET)
                    && isFree(port) && isFree(port + CLUSTER_BUS_OFFSET)) {
                handedOut.add(port);
                handedOut.add(port + CLUSTER_BUS_OFFSET);
                return port;
            }
        }
        throw new IllegalStateException("no free port pair (P, P+" + CLUSTER_BUS_OFFSET + ") between "
                + PAIR_LOWEST + " and " + PAIR_HIGHEST + " on " + HOST + " after " + ATTEMPTS + " attempts");
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getByName(HOST))) {
            return true;
        }
        catch (IOException taken) {
            return false;
        }
    }
}

package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on a free loopback port that holds every chunk it forwards, in both directions, for a fixed delay:
 * a slow network between the gateway and its store, made on purpose. Closing it closes every connection.
 */
public final class LatencyProxy implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile Duration delay;
    private volatile boolean open = true;

    public LatencyProxy(String targetHost, int targetPort, Duration delay) {
        this.target = new InetSocketAddress(targetHost, targetPort);
        this.delay = delay;
        try {
            this.server = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        Thread acceptor = new Thread(this::acceptLoop, "latency-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    public String url() {
        return "redis://127.0.0.1:" + port();
    }

    public void delay(Duration delay) {
        this.delay = delay;
    }

    /**
     * Moves the delay among {@code delaysMillis}, chosen by {@code random}, every 5 to 35 ms until the returned jitter
     * is closed, which puts the delay back to none: a network whose latency wanders around a store timeout.
     */
    public Jitter jitter(Random random, long... delaysMillis) {
        return new Jitter(random, delaysMillis);
    }

    /** A wandering delay, from {@link #jitter} until closed. */
    public final class Jitter implements AutoCloseable {

        private volatile boolean running = true;
        private final Thread thread;

        private Jitter(Random random, long[] delaysMillis) {
            thread = new Thread(() -> {
                while (running) {
                    delay(Duration.ofMillis(delaysMillis[random.nextInt(delaysMillis.length)]));
                    try {
                        Thread.sleep(5 + random.nextInt(30));
                    }
                    catch (InterruptedException ex) {
                        return;
                    }
                }
            }, "latency-proxy-jitter");
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void close() {
            running = false;
            try {
                thread.join(5_000);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            delay(Duration.ZERO);
        }
    }

    private void acceptLoop() {
        while (open) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket();
                upstream.connect(target, 2_000);
                // No Nagle: a small reply held back for an ACK would add tens of milliseconds the test did not ask for.
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            }
            catch (IOException ex) {
                if (!open) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread pump = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    long millis = delay.toMillis();
                    if (millis > 0) {
                        Thread.sleep(millis);
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            }
            catch (IOException | InterruptedException closed) {
                // The other side went away, or the proxy is closing.
            }
            finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "latency-proxy-pump");
        pump.setDaemon(true);
        pump.start();
    }

    @Override
    public void close() {
        open = false;
        closeQuietly(server);
        sockets.forEach(LatencyProxy::closeQuietly);
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        }
        catch (Exception ignored) {
            // already closed
        }
    }
}

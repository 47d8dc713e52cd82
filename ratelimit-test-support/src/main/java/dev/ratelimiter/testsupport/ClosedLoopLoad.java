package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * A closed loop through a gateway: {@code connections} keep-alive connections to 127.0.0.1, each sending its next
 * request the moment the previous answer arrived, as API key {@code client-<1..keys>} drawn at random, until
 * {@code duration} has passed. However fast or slow the gateway, it always has {@code connections} requests to work
 * on, so it is saturated, and the answers per second say how much it serves.
 *
 * <p>All connections are driven by one thread over non-blocking sockets: a thread per connection would put dozens of
 * runnable threads on the machine, and on two cores those take the CPU from the Redis beside the gateway (its answers
 * then come late for reasons no gateway has in production, where its clients are elsewhere). The thread is a daemon,
 * stops by itself at the end, and closes every connection; {@link #finish()} waits for it, {@link #close()} ends it
 * early.
 *
 * <pre>{@code
 * ClosedLoopLoad load = ClosedLoopLoad.start(port, "/api/load", 32, 1_000, Duration.ofSeconds(20), seed);
 * ... // meanwhile: another client, a fault
 * ClosedLoopLoad.Result result = load.finish();
 * }</pre>
 */
public final class ClosedLoopLoad implements AutoCloseable {

    /** Status recorded for an exchange that failed (connection refused or reset, no answer within the read timeout). */
    public static final int NO_ANSWER = 0;

    private static final long READ_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** After a failed exchange, before the connection is opened again: a refusing server is not hammered. */
    private static final long REOPEN_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final InetSocketAddress address;
    private final byte[][] requests;
    private final Random random;
    private final Duration duration;
    private final long startedAt;
    private final long deadline;
    private final List<Connection> connections = new ArrayList<>();
    private final Selector selector;
    private final Thread thread;
    private final long[] byStatus = new long[600];
    private long[] latencies = new long[16_384];
    private int answers;
    private long lastAnswer;
    private volatile boolean stopped;

    private ClosedLoopLoad(int port, String path, int connectionCount, int keys, Duration duration, long seed) {
        if (connectionCount < 1 || keys < 1 || duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("connections, keys and duration must be positive");
        }
        this.address = new InetSocketAddress("127.0.0.1", port);
        this.requests = new byte[keys][];
        for (int key = 1; key <= keys; key++) {
            requests[key - 1] = KeepAliveConnection.get(path, "client-" + key);
        }
        this.random = new Random(seed);
        this.duration = duration;
        try {
            this.selector = Selector.open();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        for (int i = 0; i < connectionCount; i++) {
            connections.add(new Connection());
        }
        this.startedAt = System.nanoTime();
        this.deadline = startedAt + duration.toNanos();
        this.lastAnswer = startedAt;
        this.thread = new Thread(this::loop, "closed-loop-load");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Starts the loop now.
     *
     * @param path the path of every request
     * @param connections requests in progress at all times
     * @param keys API keys {@code client-1} to {@code client-<keys>}, one drawn at random for each request
     * @param seed of the key draws
     */
    public static ClosedLoopLoad start(int port, String path, int connections, int keys, Duration duration,
            long seed) {
        return new ClosedLoopLoad(port, path, connections, keys, duration, seed);
    }

    /** Waits for the loop to end (at most its duration and 30 s more, then it is ended) and closes it. */
    public Result finish() {
        long left = startedAt + duration.toNanos() + TimeUnit.SECONDS.toNanos(30) - System.nanoTime();
        try {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        finally {
            close();
        }
        long[] sorted = Arrays.copyOf(latencies, answers);
        Arrays.sort(sorted);
        Map<Integer, Long> statuses = new TreeMap<>();
        for (int status = 0; status < byStatus.length; status++) {
            if (byStatus[status] > 0) {
                statuses.put(status, byStatus[status]);
            }
        }
        return new Result(Duration.ofNanos(lastAnswer - startedAt), statuses, sorted);
    }

    /** Ends the loop now (idempotent) and waits for its thread (at most 5 s); answers counted so far stay counted. */
    @Override
    public void close() {
        stopped = true;
        selector.wakeup();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private void loop() {
        try {
            long now = System.nanoTime();
            for (Connection connection : connections) {
                connection.open(now);
            }
            while (!stopped && (now = System.nanoTime()) < deadline) {
                selector.select(Math.max(1, Math.min(100, TimeUnit.NANOSECONDS.toMillis(deadline - now))));
                now = System.nanoTime();
                for (SelectionKey key : selector.selectedKeys()) {
                    ((Connection) key.attachment()).ready(key, now);
                }
                selector.selectedKeys().clear();
                for (Connection connection : connections) {
                    connection.check(now);
                }
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        finally {
            connections.forEach(Connection::close);
            try {
                selector.close();
            }
            catch (IOException ignored) {
                // closing
            }
        }
    }

    private void record(int status, long latencyNanos, long now) {
        byStatus[status >= 0 && status < byStatus.length ? status : NO_ANSWER]++;
        if (answers == latencies.length) {
            latencies = Arrays.copyOf(latencies, answers * 2);
        }
        latencies[answers++] = latencyNanos;
        lastAnswer = now;
    }

    /** One connection of the loop, on the loop's thread only. */
    private final class Connection {

        private final HttpAnswerParser parser = new HttpAnswerParser();
        private byte[] in = new byte[16 * 1024];
        private int inLimit;
        private ByteBuffer out;
        private SocketChannel channel;
        private SelectionKey key;
        private long sentAt;
        private boolean waiting;
        private long reopenAt = -1;

        void open(long now) throws IOException {
            reopenAt = -1;
            inLimit = 0;
            try {
                channel = SocketChannel.open();
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                boolean connected = channel.connect(address);
                key = channel.register(selector, connected ? 0 : SelectionKey.OP_CONNECT, this);
                if (connected) {
                    send(now);
                }
                else {
                    sentAt = now;
                    waiting = true;
                }
            }
            catch (IOException ex) {
                failed(now);
            }
        }

        void ready(SelectionKey ready, long now) {
            try {
                if (!ready.isValid()) {
                    return;
                }
                if (ready.isConnectable()) {
                    channel.finishConnect();
                    send(now);
                }
                else if (ready.isWritable()) {
                    write();
                }
                else if (ready.isReadable()) {
                    read(now);
                }
            }
            catch (IOException | RuntimeException ex) {
                failed(now);
            }
        }

        /** Reopens a connection due again; gives up on an answer that did not come within the read timeout. */
        void check(long now) throws IOException {
            if (reopenAt >= 0 && now - reopenAt >= 0) {
                open(now);
            }
            else if (waiting && now - sentAt > READ_TIMEOUT_NANOS) {
                failed(now);
            }
        }

        private void send(long now) throws IOException {
            out = ByteBuffer.wrap(requests[random.nextInt(requests.length)]);
            sentAt = now;
            waiting = true;
            write();
        }

        private void write() throws IOException {
            channel.write(out);
            key.interestOps(out.hasRemaining() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
        }

        private void read(long now) throws IOException {
            if (inLimit == in.length) {
                in = Arrays.copyOf(in, in.length * 2);
            }
            int read = channel.read(ByteBuffer.wrap(in, inLimit, in.length - inLimit));
            if (read < 0) {
                throw new IOException("the server closed the connection");
            }
            inLimit += read;
            if (!parser.parse(in, 0, inLimit)) {
                return;
            }
            waiting = false;
            record(parser.status, now - sentAt, now);
            if (parser.length != inLimit) {
                throw new IOException("bytes after the answer, none asked for");
            }
            inLimit = 0;
            if (parser.closes) {
                close();
                open(now);
            }
            else {
                send(now);
            }
        }

        private void failed(long now) {
            if (stopped) {
                return;
            }
            if (waiting) {
                record(NO_ANSWER, now - sentAt, now);
                waiting = false;
            }
            close();
            reopenAt = now + REOPEN_DELAY_NANOS;
        }

        void close() {
            if (channel != null) {
                try {
                    channel.close();
                }
                catch (IOException ignored) {
                    // closing
                }
                channel = null;
            }
        }
    }

    /**
     * What the loop saw.
     *
     * @param took from the start to the last answer
     * @param byStatus answers by status ({@link #NO_ANSWER} for exchanges that failed)
     * @param latenciesNanos every exchange's time from send to answer, sorted
     */
    public record Result(Duration took, Map<Integer, Long> byStatus, long[] latenciesNanos) {

        public long answers() {
            return latenciesNanos.length;
        }

        public long count(int status) {
            return byStatus.getOrDefault(status, 0L);
        }

        public double perSecond() {
            return took.isZero() ? 0 : answers() / (took.toNanos() / 1e9);
        }

        /** The latency below which {@code fraction} (0 to 1) of the exchanges were answered, in milliseconds. */
        public double percentileMillis(double fraction) {
            if (latenciesNanos.length == 0) {
                return Double.NaN;
            }
            int index = (int) Math.min(latenciesNanos.length - 1, Math.max(0,
                    Math.ceil(latenciesNanos.length * fraction) - 1));
            return latenciesNanos[index] / 1e6;
        }

        public double maxMillis() {
            return latenciesNanos.length == 0 ? 0 : latenciesNanos[latenciesNanos.length - 1] / 1e6;
        }

        @Override
        public String toString() {
            return String.format("%,d answers in %.1f s (%,.0f/s), by status %s, latency p50 %.1f ms, p99 %.1f ms, "
                    + "max %.1f ms", answers(), took.toNanos() / 1e9, perSecond(), byStatus, percentileMillis(0.5),
                    percentileMillis(0.99), maxMillis());
        }
    }
}

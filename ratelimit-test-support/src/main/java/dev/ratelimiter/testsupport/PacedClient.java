package dev.ratelimiter.testsupport;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * One client at a fixed rate, whatever the answers: request {@code i} is due {@code i / perSecond} after the start and
 * goes to {@code ports[i % ports.length]} (round-robin over gateway instances), all as one API key. The requests are
 * spread over a few senders, each a daemon thread with a keep-alive connection of its own to each port, so that a slow
 * answer delays only that sender's next request, which is sent as soon as it can be when late. Every answer is recorded with
 * the time its request was sent, so that what was admitted can be set against the time the client actually spent
 * sending. Stops by itself after its duration; {@link #finish()} waits for it, {@link #close()} ends it early.
 *
 * <pre>{@code
 * PacedClient hot = PacedClient.to(port).path("/api/hot").apiKey("hot").perSecond(100).start(Duration.ofSeconds(20));
 * PacedClient.Result answers = hot.finish();
 * long admitted = answers.count(200);
 * }</pre>
 */
public final class PacedClient implements AutoCloseable {

    private static final int READ_TIMEOUT_MILLIS = 10_000;

    private final List<Sender> senders = new ArrayList<>();
    private final ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
    private final long startedAt;
    private final long endsAt;
    private volatile boolean stopped;

    private PacedClient(Builder builder, Duration duration) {
        int[] ports = builder.ports;
        long interval = Math.round(1e9 / builder.perSecond);
        long count = Math.max(1, duration.toNanos() / interval);
        byte[] request = KeepAliveConnection.get(builder.path, builder.apiKey);
        this.startedAt = System.nanoTime();
        this.endsAt = startedAt + duration.toNanos();
        for (int j = 0; j < builder.connections; j++) {
            KeepAliveConnection[] connections = new KeepAliveConnection[ports.length];
            for (int target = 0; target < ports.length; target++) {
                connections[target] = new KeepAliveConnection(ports[target], READ_TIMEOUT_MILLIS);
            }
            Sender sender = new Sender(j, builder.connections, count, interval, request, connections,
                    builder.onAnswer);
            Thread thread = new Thread(sender, "paced-" + builder.apiKey + "-" + j);
            thread.setDaemon(true);
            sender.thread = thread;
            senders.add(sender);
        }
        senders.forEach(sender -> sender.thread.start());
    }

    /** A client of the gateway on {@code ports} of 127.0.0.1, requests round-robin over them. */
    public static Builder to(int... ports) {
        return new Builder(ports);
    }

    /** Waits for the last request's answer (at most the duration and 30 s more, then it is ended) and closes. */
    public Result finish() {
        long waitUntil = endsAt + TimeUnit.SECONDS.toNanos(30);
        try {
            for (Sender sender : senders) {
                long left = waitUntil - System.nanoTime();
                if (left > 0) {
                    sender.thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                }
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        finally {
            close();
        }
        List<Answer> sorted = new ArrayList<>(answers);
        sorted.sort(Comparator.comparingLong(Answer::sentAtNanos));
        return new Result(List.copyOf(sorted));
    }

    /** Ends every connection now (idempotent); answers recorded so far stay recorded. */
    @Override
    public void close() {
        stopped = true;
        for (Sender sender : senders) {
            for (KeepAliveConnection connection : sender.connections) {
                connection.close();
            }
        }
        for (Sender sender : senders) {
            try {
                sender.thread.join(TimeUnit.SECONDS.toMillis(5));
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Requests {@code first}, {@code first + step}, … of the schedule, on this sender's own connections. */
    private final class Sender implements Runnable {

        final int first;
        final int step;
        final long count;
        final long interval;
        final byte[] request;
        final KeepAliveConnection[] connections;
        final Consumer<Answer> onAnswer;
        Thread thread;

        Sender(int first, int step, long count, long interval, byte[] request, KeepAliveConnection[] connections,
                Consumer<Answer> onAnswer) {
            this.first = first;
            this.step = step;
            this.count = count;
            this.interval = interval;
            this.request = request;
            this.connections = connections;
            this.onAnswer = onAnswer;
        }

        @Override
        public void run() {
            try {
                for (long i = first; i < count && !stopped; i += step) {
                    long due = startedAt + i * interval;
                    for (long wait = due - System.nanoTime(); wait > 0 && !stopped; wait = due - System.nanoTime()) {
                        LockSupport.parkNanos(wait);
                    }
                    int target = (int) (i % connections.length);
                    long sent = System.nanoTime();
                    int status;
                    try {
                        status = connections[target].exchange(request);
                    }
                    catch (IOException | RuntimeException ex) {
                        if (stopped) {
                            return;
                        }
                        status = ClosedLoopLoad.NO_ANSWER;
                    }
                    Answer answer = new Answer(target, sent - startedAt, System.nanoTime() - sent, status);
                    answers.add(answer);
                    if (onAnswer != null) {
                        onAnswer.accept(answer);
                    }
                }
            }
            finally {
                for (KeepAliveConnection connection : connections) {
                    connection.close();
                }
            }
        }
    }

    /**
     * One request.
     *
     * @param target the index of its port in the client's ports
     * @param sentAtNanos when it was sent, from the client's start
     * @param latencyNanos from its send to its answer
     * @param status the answer's status, {@link ClosedLoopLoad#NO_ANSWER} when the exchange failed
     */
    public record Answer(int target, long sentAtNanos, long latencyNanos, int status) {
    }

    /** Every answer, in the order the requests were sent. */
    public record Result(List<Answer> answers) {

        public long count(int status) {
            return answers.stream().filter(answer -> answer.status() == status).count();
        }

        /** Answers with a status from {@code from} to {@code to}, inclusive. */
        public long countBetween(int from, int to) {
            return answers.stream().filter(answer -> answer.status() >= from && answer.status() <= to).count();
        }

        /** Answers with {@code status} to requests sent from {@code from} (inclusive) to {@code to} after the start. */
        public long countSentBetween(int status, Duration from, Duration to) {
            return answers.stream().filter(answer -> answer.status() == status
                    && answer.sentAtNanos() >= from.toNanos() && answer.sentAtNanos() < to.toNanos()).count();
        }

        /** From the first request's send to the last's: the time the client actually spent sending. */
        public Duration sendingSpan() {
            return answers.isEmpty() ? Duration.ZERO
                    : Duration.ofNanos(answers.get(answers.size() - 1).sentAtNanos() - answers.get(0).sentAtNanos());
        }

        public Map<Integer, Long> byStatus() {
            return answers.stream().collect(Collectors.groupingBy(Answer::status, TreeMap::new,
                    Collectors.counting()));
        }

        public double maxLatencyMillis() {
            return answers.stream().mapToLong(Answer::latencyNanos).max().orElse(0) / 1e6;
        }

        @Override
        public String toString() {
            return String.format("%,d requests over %.2f s, by status %s, max latency %.1f ms", answers.size(),
                    sendingSpan().toNanos() / 1e9, byStatus(), maxLatencyMillis());
        }
    }

    /** What to send, how fast, over how many connections. */
    public static final class Builder {

        private final int[] ports;
        private String path = "/";
        private String apiKey = "paced";
        private double perSecond = 10;
        private int connections = 4;
        private Consumer<Answer> onAnswer;

        private Builder(int[] ports) {
            if (ports.length == 0) {
                throw new IllegalArgumentException("at least one port");
            }
            this.ports = ports.clone();
        }

        public Builder path(String path) {
            this.path = path;
            return this;
        }

        /** Sent as {@code X-API-Key}. */
        public Builder apiKey(String apiKey) {
            this.apiKey = apiKey;
            return this;
        }

        public Builder perSecond(double perSecond) {
            if (!(perSecond > 0)) {
                throw new IllegalArgumentException("a rate above 0, not " + perSecond);
            }
            this.perSecond = perSecond;
            return this;
        }

        /**
         * Senders the requests are spread over (4 by default), each with a connection of its own to each port and one
         * request out at most.
         */
        public Builder connections(int connections) {
            if (connections < 1) {
                throw new IllegalArgumentException("at least one connection");
            }
            this.connections = connections;
            return this;
        }

        /** Told of each answer as it arrives, on the thread of the connection it came on. */
        public Builder onAnswer(Consumer<Answer> onAnswer) {
            this.onAnswer = onAnswer;
            return this;
        }

        /** Starts sending now, for {@code duration}. */
        public PacedClient start(Duration duration) {
            return new PacedClient(this, duration);
        }
    }
}

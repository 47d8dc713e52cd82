package dev.ratelimiter.kafka;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import dev.ratelimiter.core.AbuseScores;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the compacted abuse-score topic from its beginning into {@link AbuseScores}, on a thread of its own, every
 * partition, without a consumer group (each instance needs every client's score). Nothing here can hold up the
 * gateway: a missing topic or an absent Kafka leaves the scores as last known (decaying), and the health says so; a
 * record that cannot be read is skipped and counted, with a WARN at most once per thousand.
 *
 * <p>A record can only lower a client's limits, to no less than the configured floor, for a while: a forged record
 * cannot raise a limit. Who may write the topic is the ACLs' business.
 */
public final class AbuseScoreListener implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(AbuseScoreListener.class);

    private final Supplier<Consumer<String, String>> consumers;
    private final String topic;
    private final AbuseScores scores;
    private final Thread thread;
    private final AtomicLong applied = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();
    private volatile Consumer<String, String> consumer;
    private volatile Map<TopicPartition, Long> endOffsets;
    private volatile boolean running = true;
    private volatile boolean topicMissing;
    private volatile boolean caughtUp;
    private volatile String problem;
    private long probedAt;

    /** How often the broker is asked whether it is there (see {@link #probeEvery}). */
    static final Duration PROBE_INTERVAL = Duration.ofSeconds(5);

    /** @param consumers makes the consumer on the listener's thread (an unresolvable Kafka must not stop start-up) */
    public AbuseScoreListener(Supplier<Consumer<String, String>> consumers, String topic, AbuseScores scores) {
        this.consumers = consumers;
        this.topic = topic;
        this.scores = scores;
        this.thread = new Thread(this::run, "ratelimit-abuse-scores");
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    private void run() {
        while (running) {
            try {
                if (consumer == null) {
                    consumer = consumers.get();
                }
                if (endOffsets == null) {
                    assign();
                }
                else {
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                        apply(record.key(), record.value(), Instant.ofEpochMilli(Math.max(0, record.timestamp())));
                    }
                    noteCaughtUp();
                    probeEvery(PROBE_INTERVAL);
                }
            }
            catch (org.apache.kafka.common.errors.WakeupException
                    | org.apache.kafka.common.errors.InterruptException ex) {
                return;
            }
            catch (RuntimeException ex) {
                if (problem == null) {
                    logger.warn("Abuse scores cannot be read from Kafka (topic {}): {}; the scores held stay, "
                            + "decaying", topic, ex.toString());
                }
                problem = ex.toString();
                pause();
            }
        }
    }

    /**
     * A poll answers nothing rather than fail when the broker is gone, so the broker is asked something every
     * {@code interval} (the topic's end offsets): its failure is what the health reports, its success clears it.
     */
    private void probeEvery(Duration interval) {
        if (System.nanoTime() - probedAt < interval.toNanos()) {
            return;
        }
        consumer.endOffsets(endOffsets.keySet(), Duration.ofSeconds(2));
        probedAt = System.nanoTime();
        problem = null;
    }

    private void assign() {
        var partitions = consumer.partitionsFor(topic, Duration.ofSeconds(5));
        if (partitions == null || partitions.isEmpty()) {
            if (!topicMissing) {
                logger.warn("The abuse-score topic {} does not exist: limits stay as configured until it does "
                        + "(create it with cleanup.policy=compact)", topic);
            }
            topicMissing = true;
            pause();
            return;
        }
        List<TopicPartition> all = partitions.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
        consumer.assign(all);
        consumer.seekToBeginning(all);
        endOffsets = consumer.endOffsets(all, Duration.ofSeconds(5));
        probedAt = System.nanoTime();
        topicMissing = false;
        problem = null;
        logger.info("Reading abuse scores from {} ({} partitions)", topic, all.size());
    }

    private void noteCaughtUp() {
        if (caughtUp) {
            return;
        }
        for (Map.Entry<TopicPartition, Long> end : endOffsets.entrySet()) {
            if (consumer.position(end.getKey(), Duration.ofSeconds(1)) < end.getValue()) {
                return;
            }
        }
        caughtUp = true;
        logger.info("Abuse scores read: {} clients have their limits lowered", scores.scaledClients());
    }

    private void pause() {
        try {
            Thread.sleep(1_000);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    /**
     * Applies one record: a tombstone forgets the client's score; anything unreadable is skipped. Visible for tests
     * of the record format.
     */
    public void apply(String client, String value, Instant written) {
        try {
            if (client == null || client.isEmpty()) {
                throw new IllegalArgumentException("no client id as the key");
            }
            if (value == null) {
                scores.remove(client);
            }
            else {
                scores.apply(client, AbuseScoreJson.read(value, written));
            }
            applied.incrementAndGet();
        }
        catch (RuntimeException ex) {
            if (skipped.incrementAndGet() % 1_000 == 1) {
                logger.warn("Skipped an abuse-score record that cannot be used (key {}): {} ({} skipped so far)",
                        client == null ? null : client.substring(0, Math.min(64, client.length())), ex.getMessage(),
                        skipped.get());
            }
        }
    }

    /** Whether the topic has been read to where it ended when it was assigned. */
    public boolean caughtUp() {
        return caughtUp;
    }

    /** Whether the topic was found missing the last time it was looked for. */
    public boolean topicMissing() {
        return topicMissing;
    }

    /** Why Kafka could not be read the last time, or null. */
    public String problem() {
        return problem;
    }

    public long applied() {
        return applied.get();
    }

    public long skipped() {
        return skipped.get();
    }

    @Override
    public void close() {
        running = false;
        ListenerThreads.stop(thread, consumer);
    }
}

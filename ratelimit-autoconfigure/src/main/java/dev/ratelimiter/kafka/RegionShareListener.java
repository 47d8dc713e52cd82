package dev.ratelimiter.kafka;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.core.RegionShares;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads the shares topic from its beginning (it is compacted: the last shares of every moved bucket) and applies
 * each record to this region's {@link RegionShares}, on a thread of its own. Every instance reads all partitions
 * itself, without a consumer group: each needs every share. When Kafka is away it keeps trying; the shares it has
 * stay in force, and {@link RegionShares#stale} says so once the rebalancer's heartbeat is overdue.
 *
 * <p>A record that cannot be read, or whose shares sum to more than its limit, is skipped and counted: a corrupt or
 * forged record must never raise a region above its share.
 */
public final class RegionShareListener implements AutoCloseable {

    /** The key of the rebalancer's heartbeat record (share keys always contain a '/'). */
    public static final String HEARTBEAT = "heartbeat";

    private static final Logger logger = LoggerFactory.getLogger(RegionShareListener.class);
    private static final JsonMapper json = JsonMapper.builder().build();

    private final Consumer<String, String> consumer;
    private final String topic;
    private final RegionShares shares;
    private final Duration staleAfter;
    private final Clock clock;
    private final Thread thread;
    private final AtomicLong applied = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private volatile boolean running = true;
    private volatile boolean assigned;

    public RegionShareListener(Consumer<String, String> consumer, String topic, RegionShares shares,
            Duration staleAfter, Clock clock) {
        this.consumer = consumer;
        this.topic = topic;
        this.shares = shares;
        this.staleAfter = staleAfter;
        this.clock = clock;
        this.thread = new Thread(this::run, "ratelimit-region-shares");
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    private void run() {
        while (running) {
            try {
                if (!assigned) {
                    assign();
                }
                else {
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                        apply(record.key(), record.value());
                    }
                }
            }
            catch (org.apache.kafka.common.errors.WakeupException | org.apache.kafka.common.errors.InterruptException ex) {
                return;
            }
            catch (RuntimeException ex) {
                logger.warn("Region shares cannot be read from Kafka (topic {}): {}; the shares in force stay",
                        topic, ex.toString());
                pause();
            }
        }
    }

    private void assign() {
        var partitions = consumer.partitionsFor(topic, Duration.ofSeconds(5));
        if (partitions == null || partitions.isEmpty()) {
            pause(); // no topic yet: the rebalancer creates it with its first shares
            return;
        }
        List<TopicPartition> all = partitions.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
        consumer.assign(all);
        consumer.seekToBeginning(all);
        assigned = true;
        logger.info("Reading region shares from {} ({} partitions)", topic, all.size());
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

    /** Applies one record of the shares topic; visible for tests of the record format. */
    public void apply(String key, String value) {
        if (key == null) {
            refused.incrementAndGet();
            return;
        }
        if (value == null) {
            shares.apply(key, 0, null); // a tombstone: back to the default split
            applied.incrementAndGet();
            return;
        }
        try {
            JsonNode record = json.readTree(value);
            Instant now = clock.instant();
            if (HEARTBEAT.equals(key)) {
                Instant at = Instant.ofEpochMilli(record.path("heartbeat").asLong(0));
                // A heartbeat read back from the topic's beginning says nothing about now.
                if (at.plus(staleAfter).isAfter(now)) {
                    shares.heard(now);
                }
                return;
            }
            long quota = record.path("quota").asLong(0);
            Map<String, Long> amounts = new HashMap<>();
            long sum = 0;
            for (var entry : record.path("shares").properties()) {
                long amount = entry.getValue().asLong(-1);
                if (amount < 0) {
                    throw new IllegalArgumentException("share of " + entry.getKey() + " is not a whole number");
                }
                amounts.put(entry.getKey(), amount);
                sum += amount;
            }
            if (quota < 1 || sum > quota) {
                throw new IllegalArgumentException("shares sum to " + sum + " of a limit of " + quota);
            }
            shares.apply(key, quota, amounts);
            applied.incrementAndGet();
        }
        catch (RuntimeException ex) {
            if (refused.incrementAndGet() % 1_000 == 1) {
                logger.warn("Skipped a region share record that cannot be used (key {}): {}", key, ex.getMessage());
            }
        }
    }

    public boolean reading() {
        return assigned;
    }

    /** Share records applied (tombstones included). */
    public long applied() {
        return applied.get();
    }

    /** Share records skipped as unusable. */
    public long refused() {
        return refused.get();
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            thread.join(5_000);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        consumer.close(Duration.ofSeconds(2));
    }
}

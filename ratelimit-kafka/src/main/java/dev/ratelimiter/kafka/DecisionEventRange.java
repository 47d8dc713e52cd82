package dev.ratelimiter.kafka;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.DecisionEvent;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The decision events recorded on the topic between two instants, read once, start to end, by a consumer of no group:
 * each partition assigned and sought to the first record at or after {@code from} ({@code offsetsForTimes}), read to
 * the first at or after {@code to}, nothing committed, everything within one deadline. Kafka that does not answer in
 * time is {@link Unavailable}; a range holding more records than allowed is refused before any is read
 * ({@link TooMany}).
 */
public final class DecisionEventRange {

    private static final Duration MAX_POLL = Duration.ofMillis(500);

    /**
     * The events of the range, in time order.
     *
     * @param malformed records of the range that were no decision event of schema {@value DecisionEvent#SCHEMA}
     */
    public record Read(List<DecisionEvent> events, long malformed) {
    }

    /** Kafka did not answer, or not all of the range, within the deadline. */
    public static final class Unavailable extends RuntimeException {
        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The range holds more records than a replay may read. */
    public static final class TooMany extends RuntimeException {
        public final long records;

        TooMany(long records, long max) {
            super("The range holds " + records + " decision events; a replay reads at most " + max
                    + ". Choose a shorter range.");
            this.records = records;
        }
    }

    private final Map<String, Object> consumerConfig;
    private final String topic;

    /**
     * @param bootstrapServers the brokers the gateway sends its events to
     * @param topic the decision-event topic
     * @param overrides consumer settings (Kafka names) over ours
     */
    public DecisionEventRange(String bootstrapServers, String topic, Map<String, String> overrides) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, "ratelimit-what-if");
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
        // Only committed records: an aborted transaction's events never happened.
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.putAll(overrides);
        this.consumerConfig = config;
        this.topic = topic;
    }

    /** The events recorded in {@code [from, to)}, at most {@code maxEvents} of them, read within {@code within}. */
    public Read read(Instant from, Instant to, long maxEvents, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerConfig)) {
            List<PartitionInfo> partitions = consumer.partitionsFor(topic, left(deadline));
            if (partitions == null || partitions.isEmpty()) {
                return new Read(List.of(), 0);
            }
            Map<TopicPartition, Long> fromTimes = new HashMap<>();
            Map<TopicPartition, Long> toTimes = new HashMap<>();
            for (PartitionInfo partition : partitions) {
                TopicPartition tp = new TopicPartition(topic, partition.partition());
                fromTimes.put(tp, from.toEpochMilli());
                toTimes.put(tp, to.toEpochMilli());
            }
            Map<TopicPartition, OffsetAndTimestamp> starts = consumer.offsetsForTimes(fromTimes, left(deadline));
            Map<TopicPartition, OffsetAndTimestamp> ends = consumer.offsetsForTimes(toTimes, left(deadline));
            Map<TopicPartition, Long> logEnds = consumer.endOffsets(fromTimes.keySet(), left(deadline));
            Map<TopicPartition, Long> endOf = new HashMap<>();
            long records = 0;
            for (TopicPartition tp : fromTimes.keySet()) {
                OffsetAndTimestamp start = starts.get(tp);
                OffsetAndTimestamp end = ends.get(tp);
                long endOffset = end != null ? end.offset() : logEnds.get(tp);
                if (start != null && start.offset() < endOffset) {
                    endOf.put(tp, endOffset);
                    records += endOffset - start.offset();
                }
            }
            if (records > maxEvents) {
                throw new TooMany(records, maxEvents);
            }
            consumer.assign(endOf.keySet());
            endOf.keySet().forEach(tp -> consumer.seek(tp, starts.get(tp).offset()));
            return readAssigned(consumer, endOf, from, to, deadline, within);
        }
        catch (KafkaException ex) {
            throw new Unavailable("Kafka did not answer within " + within + " (" + ex.getMessage() + ").", ex);
        }
    }

    private Read readAssigned(KafkaConsumer<String, String> consumer, Map<TopicPartition, Long> endOf, Instant from,
            Instant to, long deadline, Duration within) {
        List<DecisionEvent> events = new ArrayList<>();
        Map<String, String> shared = new HashMap<>();
        long malformed = 0;
        Map<TopicPartition, Long> open = new HashMap<>(endOf);
        while (!open.isEmpty()) {
            if (System.nanoTime() - deadline >= 0) {
                throw new Unavailable("Kafka did not deliver the whole range within " + within + " (" + events.size()
                        + " events read).", null);
            }
            Duration wait = left(deadline);
            for (ConsumerRecord<String, String> record : consumer.poll(wait.compareTo(MAX_POLL) < 0 ? wait
                    : MAX_POLL)) {
                TopicPartition tp = new TopicPartition(record.topic(), record.partition());
                Long end = open.get(tp);
                if (end == null || record.offset() >= end) {
                    continue;
                }
                DecisionEvent event = DecisionEventReading.parse(record.value(), shared);
                if (event == null) {
                    malformed++;
                }
                else if (!event.time().isBefore(from) && event.time().isBefore(to)) {
                    events.add(event);
                }
            }
            for (TopicPartition tp : List.copyOf(open.keySet())) {
                if (consumer.position(tp, left(deadline)) >= open.get(tp)) {
                    open.remove(tp);
                    consumer.pause(List.of(tp));
                }
            }
        }
        // Each partition is in order, the range is not: one bucket may span partitions (a per-route rule).
        events.sort(Comparator.comparing(DecisionEvent::time));
        return new Read(events, malformed);
    }

    private static Duration left(long deadline) {
        return Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime()));
    }
}

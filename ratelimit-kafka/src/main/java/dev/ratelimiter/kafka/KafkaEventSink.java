package dev.ratelimiter.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import dev.ratelimiter.core.DecisionEvent;
import dev.ratelimiter.core.DecisionEventJson;
import dev.ratelimiter.core.EventSink;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RetriableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;

/**
 * Sends decision events to a Kafka topic, keyed by client so one client's events stay in order. Runs on the event
 * queue's thread only.
 *
 * <p>When Kafka cannot take events (no metadata within {@code max.block.ms}, a full buffer, a broker gone), the
 * sink stops trying for {@code backOff} and counts everything it is given meanwhile as failed, so the queue keeps
 * moving and nothing waits; then it tries again, and events flow as soon as Kafka is back.
 */
public final class KafkaEventSink implements EventSink {

    private static final Logger logger = LoggerFactory.getLogger(KafkaEventSink.class);

    private final DefaultKafkaProducerFactory<String, String> producers;
    private final KafkaTemplate<String, String> template;
    private final String topic;
    private final Duration backOff;
    private final LongSupplier nanoClock;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private volatile long pausedUntilNanos;
    private volatile boolean paused;
    /** Whether a producer was ever asked for: closing must not create one just to flush nothing. */
    private volatile boolean used;

    public KafkaEventSink(DefaultKafkaProducerFactory<String, String> producers, String topic, Duration backOff,
            LongSupplier nanoClock) {
        this.producers = producers;
        this.template = new KafkaTemplate<>(producers);
        this.topic = topic;
        this.backOff = backOff;
        this.nanoClock = nanoClock;
        this.pausedUntilNanos = nanoClock.getAsLong();
    }

    /**
     * A sink to {@code topic} at {@code servers} with the telemetry producer defaults ({@link TelemetryProducerConfig},
     * client id {@code ratelimit-events}, linger 20 ms, delivery timeout 30 s) under the user's {@code overrides}.
     * Closing it waits at most two seconds for what is buffered.
     */
    public static KafkaEventSink to(String servers, String topic, Duration backOff, Map<String, String> overrides) {
        DefaultKafkaProducerFactory<String, String> producers = new DefaultKafkaProducerFactory<>(
                TelemetryProducerConfig.of(servers, "ratelimit-events", 20, 30_000, overrides));
        producers.setPhysicalCloseTimeout(2);
        return new KafkaEventSink(producers, topic, backOff, System::nanoTime);
    }

    @Override
    public void accept(List<DecisionEvent> events) {
        for (int i = 0; i < events.size(); i++) {
            if (paused && nanoClock.getAsLong() < pausedUntilNanos) {
                failed.addAndGet(events.size() - i);
                return;
            }
            DecisionEvent event = events.get(i);
            used = true;
            try {
                template.send(new ProducerRecord<>(topic, null, event.time().toEpochMilli(), event.key(),
                        DecisionEventJson.write(event))).whenComplete((result, failure) -> {
                            if (failure == null) {
                                sent.incrementAndGet();
                                if (paused) {
                                    paused = false;
                                    logger.info("Decision events reach Kafka again (topic {})", topic);
                                }
                            }
                            else {
                                failed.incrementAndGet();
                                pause(failure);
                            }
                        });
            }
            catch (RuntimeException ex) {
                failed.incrementAndGet();
                pause(ex);
            }
        }
    }

    private void pause(Throwable failure) {
        pausedUntilNanos = nanoClock.getAsLong() + backOff.toNanos();
        if (!paused) {
            paused = true;
            logger.warn("Decision events cannot reach Kafka ({}); dropping them, counted, and trying again every {}",
                    failure.toString(), backOff);
        }
        Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
        if (!(cause instanceof RetriableException) && !(failure instanceof RetriableException)) {
            // A producer in a fatal state stays in it: start a fresh one at the next send.
            producers.reset();
        }
    }

    /** Events Kafka acknowledged. */
    @Override
    public long delivered() {
        return sent.get();
    }

    @Override
    public long failed() {
        return failed.get();
    }

    public String topic() {
        return topic;
    }

    /** The producers' settings and close timeout, for tests of the defaults. */
    DefaultKafkaProducerFactory<String, String> producers() {
        return producers;
    }

    @Override
    public void close() {
        if (!used) {
            return;
        }
        // Closing sends what is buffered, within the factory's close timeout (two seconds, set in to(...)): shutting
        // down must not wait on a broker that is gone.
        producers.destroy();
    }

    @Override
    public String toString() {
        return "kafka(" + topic + ")";
    }
}

package dev.ratelimiter.kafka;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import dev.ratelimiter.core.AbuseScore;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Writes an operator's score (or its removal, a tombstone) to the abuse-score topic, so that every instance applies
 * it, this one included, through its {@link AbuseScoreListener}. Blocking: called off the event loop by the rules API.
 */
public final class AbuseScorePublisher implements AutoCloseable {

    private final Supplier<Producer<String, String>> producers;
    private final String topic;
    private final Duration timeout;
    private Producer<String, String> producer;

    public AbuseScorePublisher(Supplier<Producer<String, String>> producers, String topic, Duration timeout) {
        this.producers = producers;
        this.topic = topic;
        this.timeout = timeout;
    }

    /** Publishes a score; {@code null} publishes the client's tombstone. Throws when Kafka did not take it in time. */
    public void publish(String client, AbuseScore score) {
        ProducerRecord<String, String> record = new ProducerRecord<>(topic, client,
                score == null ? null : AbuseScoreJson.write(score));
        try {
            producer().send(record).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while publishing an abuse score", ex);
        }
        catch (ExecutionException | TimeoutException ex) {
            throw new IllegalStateException("Kafka did not take the abuse score within " + timeout + ": " + ex, ex);
        }
    }

    private synchronized Producer<String, String> producer() {
        if (producer == null) {
            producer = producers.get();
        }
        return producer;
    }

    @Override
    public synchronized void close() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(2));
        }
    }
}

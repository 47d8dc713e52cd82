package dev.ratelimiter.kafka;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimiter.core.JsonText;
import dev.ratelimiter.core.RegionUsage;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every interval, sends what this instance admitted and refused per global bucket to the usage topic, one record per
 * bucket keyed by its share key (so one bucket's records stay in order in one partition). Runs on a thread of its
 * own; a Kafka that cannot take records costs the records of that interval (counted), never a request.
 */
public final class RegionUsagePublisher implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(RegionUsagePublisher.class);

    private final RegionUsage usage;
    private final Producer<String, String> producer;
    private final String topic;
    private final String region;
    private final String instance;
    private final Duration interval;
    private final Clock clock;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread named = new Thread(task, "ratelimit-region-usage");
        named.setDaemon(true);
        return named;
    });
    private volatile boolean failing;

    public RegionUsagePublisher(RegionUsage usage, Producer<String, String> producer, String topic, String region,
            String instance, Duration interval, Clock clock) {
        this.usage = usage;
        this.producer = producer;
        this.topic = topic;
        this.region = region;
        this.instance = instance;
        this.interval = interval;
        this.clock = clock;
    }

    public void start() {
        long millis = interval.toMillis();
        thread.scheduleAtFixedRate(this::publishSafely, millis, millis, TimeUnit.MILLISECONDS);
    }

    private void publishSafely() {
        try {
            publish();
        }
        catch (RuntimeException ex) {
            logger.warn("Region usage could not be published: {}", ex.toString());
        }
    }

    /** Sends one interval's usage; visible for tests that drive the interval themselves. */
    public void publish() {
        List<RegionUsage.Report> reports = usage.drain();
        long now = clock.millis();
        for (RegionUsage.Report report : reports) {
            try {
                producer.send(new ProducerRecord<>(topic, null, now, report.key(), json(report, now)),
                        (metadata, failure) -> {
                            if (failure == null) {
                                sent.incrementAndGet();
                                failing = false;
                            }
                            else {
                                failed(failure);
                            }
                        });
            }
            catch (RuntimeException ex) {
                failed(ex);
            }
        }
    }

    private void failed(Throwable failure) {
        failed.incrementAndGet();
        if (!failing) {
            failing = true;
            logger.warn("Region usage cannot reach Kafka (topic {}): {}; shares stay as they are until it can",
                    topic, failure.toString());
        }
    }

    String json(RegionUsage.Report report, long now) {
        StringBuilder json = new StringBuilder(256);
        json.append("{\"region\":");
        JsonText.quote(json, region);
        json.append(",\"instance\":");
        JsonText.quote(json, instance);
        json.append(",\"rule\":");
        JsonText.quote(json, report.rule());
        json.append(",\"bucket\":");
        JsonText.quote(json, report.key());
        json.append(",\"quota\":").append(report.quota())
                .append(",\"windowMs\":").append(report.windowMillis())
                .append(",\"share\":").append(report.share())
                .append(",\"admitted\":").append(report.admitted())
                .append(",\"refused\":").append(report.refused())
                .append(",\"intervalMs\":").append(interval.toMillis())
                .append(",\"at\":").append(now).append('}');
        return json.toString();
    }

    /** Records Kafka acknowledged. */
    public long sent() {
        return sent.get();
    }

    /** Records Kafka could not take. */
    public long failed() {
        return failed.get();
    }

    @Override
    public void close() {
        thread.shutdownNow();
        // Closing sends what is buffered, for at most a moment: shutting down must not wait on a broker that is gone.
        producer.close(Duration.ofSeconds(2));
    }
}

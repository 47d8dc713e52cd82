package dev.ratelimiter.kafka;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import dev.ratelimiter.core.JsonText;
import dev.ratelimiter.core.RegionUsage;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every interval, sends what this instance admitted and refused per global bucket to the usage topic, one record per
 * bucket keyed by its share key (so one bucket's records stay in order in one partition). Runs on a thread of its
 * own, and makes its producer there, lazily: a Kafka that cannot be resolved or reached costs the records of that
 * interval (counted), never the start-up or a request.
 */
public final class RegionUsagePublisher implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(RegionUsagePublisher.class);

    /** Who is reporting, and under which settings: every record says so. */
    public record Reporter(String region, String instance, String regions, String clientIds) {
    }

    private final RegionUsage usage;
    private final Supplier<Producer<String, String>> producers;
    private final String topic;
    private final Reporter reporter;
    private final Duration interval;
    private final Clock clock;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread named = new Thread(task, "ratelimit-region-usage");
        named.setDaemon(true);
        return named;
    });
    private Producer<String, String> producer;
    private long lastDrainMillis;
    private volatile boolean failing;

    public RegionUsagePublisher(RegionUsage usage, Supplier<Producer<String, String>> producers, String topic,
            Reporter reporter, Duration interval, Clock clock) {
        this.usage = usage;
        this.producers = producers;
        this.topic = topic;
        this.reporter = reporter;
        this.interval = interval;
        this.clock = clock;
        this.lastDrainMillis = clock.millis();
    }

    public void start() {
        long millis = interval.toMillis();
        thread.scheduleWithFixedDelay(this::publishSafely, millis, millis, TimeUnit.MILLISECONDS);
    }

    private void publishSafely() {
        try {
            publish();
        }
        catch (RuntimeException ex) {
            failed(ex);
        }
    }

    /** Sends the usage since the last call; visible for tests that drive the interval themselves. */
    public void publish() {
        long now = clock.millis();
        // The time that passed, not the interval configured: a late run must not report a longer span as one interval.
        long elapsed = Math.max(1, now - lastDrainMillis);
        lastDrainMillis = now;
        List<RegionUsage.Report> reports = usage.drain(elapsed);
        if (reports.isEmpty()) {
            return;
        }
        if (producer == null) {
            try {
                producer = producers.get();
            }
            catch (RuntimeException ex) {
                failed.addAndGet(reports.size());
                failed(ex);
                return;
            }
        }
        for (int i = 0; i < reports.size(); i++) {
            RegionUsage.Report report = reports.get(i);
            try {
                producer.send(record(report, elapsed, now), (metadata, failure) -> {
                    if (failure == null) {
                        sent.incrementAndGet();
                        failing = false;
                    }
                    else {
                        failed.incrementAndGet();
                        failed(failure);
                    }
                });
            }
            catch (RuntimeException ex) {
                // Kafka cannot take records now (no metadata within max.block.ms): the rest of this interval would
                // wait as long each, so it is dropped, counted; the next interval tries again.
                failed.addAndGet(reports.size() - i);
                failed(ex);
                return;
            }
        }
    }

    private void failed(Throwable failure) {
        if (!failing) {
            failing = true;
            logger.warn("Region usage cannot reach Kafka (topic {}): {}; shares stay as they are until it can",
                    topic, failure.toString());
        }
    }

    /** One bucket's usage as the record the rebalancer reads: keyed by its share key, timestamped {@code now}. */
    private ProducerRecord<String, String> record(RegionUsage.Report report, long elapsedMillis, long now) {
        return new ProducerRecord<>(topic, null, now, report.key(), json(report, elapsedMillis, now));
    }

    String json(RegionUsage.Report report, long elapsedMillis, long now) {
        StringBuilder json = new StringBuilder(320);
        json.append("{\"region\":");
        JsonText.quote(json, reporter.region());
        JsonText.field(json, "instance", reporter.instance());
        JsonText.field(json, "regions", reporter.regions());
        JsonText.field(json, "ids", reporter.clientIds());
        JsonText.field(json, "rule", report.rule());
        JsonText.field(json, "bucket", report.key());
        json.append(",\"quota\":").append(report.quota())
                .append(",\"windowMs\":").append(report.windowMillis())
                .append(",\"share\":").append(report.share())
                .append(",\"admitted\":").append(report.admitted())
                .append(",\"refused\":").append(report.refused())
                .append(",\"quiet\":").append(report.quiet())
                .append(",\"intervalMs\":").append(elapsedMillis)
                .append(",\"at\":").append(now).append('}');
        return json.toString();
    }

    /** Records Kafka acknowledged. */
    public long sent() {
        return sent.get();
    }

    /** Records Kafka could not take, or that were dropped because it could not. */
    public long failed() {
        return failed.get();
    }

    @Override
    public void close() {
        thread.shutdownNow();
        try {
            thread.awaitTermination(2, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        if (producer != null) {
            // The last word: zeros for every bucket, so the rebalancer reads this instance's silence as leaving, not
            // as lost contact (which would hold the buckets' shares). Then what is buffered goes out, for a moment
            // at most: shutting down must not wait on a broker that is gone.
            long now = clock.millis();
            try {
                for (RegionUsage.Report report : usage.farewell()) {
                    producer.send(record(report, Math.max(1, now - lastDrainMillis), now));
                }
            }
            catch (RuntimeException ex) {
                failed(ex);
            }
            producer.close(Duration.ofSeconds(2));
        }
    }
}

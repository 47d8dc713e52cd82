package dev.ratelimiter.rollup;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the rollup until the JVM is asked to stop. Settings: see {@link RollupSettings}.
 *
 * <p>If Kafka Streams fails for good, the process exits with status 1 instead of lingering without work, so that
 * whatever supervises it (Kubernetes, systemd) restarts it.
 */
public final class UsageRollupApplication {

    private static final Logger log = LoggerFactory.getLogger(UsageRollupApplication.class);

    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private UsageRollupApplication() {
    }

    public static void main(String[] args) throws InterruptedException {
        RollupSettings settings = RollupSettings.from(System.getProperties(), System.getenv());
        log.info("Rolling up {} into {} (application id {}, brokers {})", settings.inputTopic(),
                settings.outputTopic(), settings.applicationId(), settings.bootstrapServers());

        AbuseScoring scoring = AbuseScoring.from(System.getProperties(), System.getenv());
        if (scoring != null) {
            log.info("Scoring clients' conduct per {} into {}", scoring.window(), scoring.topic());
        }
        KafkaStreams streams = new KafkaStreams(
                new RollupTopology(settings.inputTopic(), settings.outputTopic(), scoring).build(),
                settings.streamsProperties());
        CountDownLatch stopped = new CountDownLatch(1);
        streams.setStateListener((newState, oldState) -> {
            if (newState == KafkaStreams.State.ERROR || newState == KafkaStreams.State.NOT_RUNNING) {
                stopped.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(ex -> {
            log.error("Stream thread failed; shutting down", ex);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // Closing commits what has been processed, so a restart does not count those events twice.
            streams.close(CLOSE_TIMEOUT);
            stopped.countDown();
        }, "usage-rollup-shutdown"));

        streams.start();
        stopped.await();
        if (streams.state() == KafkaStreams.State.ERROR) {
            streams.close(CLOSE_TIMEOUT);
            System.exit(1);
        }
    }
}

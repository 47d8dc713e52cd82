package dev.ratelimiter.rebalancer;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rebalancer as a process ({@code java -jar ratelimit-region-rebalancer.jar}), or started in another JVM with
 * {@link #start}. Settings: see {@link RebalancerSettings}. A Kafka Streams failure for good ends the process with
 * status 1, for its supervisor to restart it; the gateways keep their last shares meanwhile.
 */
public final class RegionRebalancerApplication implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RegionRebalancerApplication.class);

    private final KafkaStreams streams;
    private final CountDownLatch ended = new CountDownLatch(1);

    private RegionRebalancerApplication(RebalancerSettings settings) {
        this.streams = new KafkaStreams(new RebalancerTopology(settings).build(), settings.streamsProperties());
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                ended.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(failure -> {
            log.error("The rebalancer's stream thread failed; stopping", failure);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    }

    /** Starts rebalancing; {@link #close} stops it, committing what it has processed. */
    public static RegionRebalancerApplication start(RebalancerSettings settings) {
        log.info("Rebalancing {} into {} for regions {} every {} (floor {}, grow delay {})", settings.usageTopic(),
                settings.sharesTopic(), settings.weights(), settings.interval(), settings.floor(),
                settings.growDelay());
        RegionRebalancerApplication application = new RegionRebalancerApplication(settings);
        application.streams.start();
        return application;
    }

    public KafkaStreams.State state() {
        return streams.state();
    }

    @Override
    public void close() {
        streams.close(Duration.ofSeconds(30));
        ended.countDown();
    }

    public static void main(String[] args) throws InterruptedException {
        RebalancerSettings.requireLogLevels(System.getProperties(), System.getenv());
        RegionRebalancerApplication application = start(RebalancerSettings.from(System.getProperties(),
                System.getenv()));
        Runtime.getRuntime().addShutdownHook(new Thread(application::close, "region-rebalancer-shutdown"));
        application.ended.await();
        if (application.state() == KafkaStreams.State.ERROR) {
            application.close();
            System.exit(1);
        }
    }
}

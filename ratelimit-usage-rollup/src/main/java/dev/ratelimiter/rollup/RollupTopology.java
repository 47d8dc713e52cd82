package dev.ratelimiter.rollup;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.LogAndSkipOnInvalidTimestamp;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rollup: decision events in, per client per event-time hour, the running totals of clients denied at least
 * once in that hour out.
 *
 * <p>Every update of a qualifying hour is written as it happens (no suppression until the hour closes), so the
 * output topic is a changelog: the latest record per key is the current total. That keeps the rollup useful while
 * the hour is still running, which is when someone looks at a noisy client.
 */
public final class RollupTopology {

    public static final String DEFAULT_INPUT_TOPIC = "ratelimit.decisions";

    public static final String DEFAULT_OUTPUT_TOPIC = "ratelimit.usage-rollup";

    /** Also names the store's changelog topic, {@code <application.id>-hourly-usage-changelog}. */
    static final String STORE_NAME = "hourly-usage";

    /** The scoring windows' store, {@code <application.id>-client-conduct-changelog}. */
    static final String CONDUCT_STORE = "client-conduct";

    static final Duration HOUR = Duration.ofHours(1);

    /** Gateway instances send asynchronously and may lag; an hour keeps taking events for this long after it ends. */
    static final Duration GRACE = Duration.ofMinutes(5);

    /**
     * A closed hour is never updated again, so the store only needs it until the grace period is over; the margin
     * keeps it from being dropped right at that boundary.
     */
    static final Duration RETENTION = HOUR.plus(GRACE).plus(Duration.ofMinutes(5));

    private static final Logger log = LoggerFactory.getLogger(RollupTopology.class);

    private final String inputTopic;

    private final String outputTopic;

    private final AbuseScoring abuseScoring;

    public RollupTopology(String inputTopic, String outputTopic) {
        this(inputTopic, outputTopic, null);
    }

    /** @param abuseScoring how to score clients' conduct and where to publish it, or null: no scores */
    public RollupTopology(String inputTopic, String outputTopic, AbuseScoring abuseScoring) {
        this.inputTopic = Objects.requireNonNull(inputTopic, "inputTopic");
        this.outputTopic = Objects.requireNonNull(outputTopic, "outputTopic");
        this.abuseScoring = abuseScoring;
    }

    public Topology build() {
        DecisionEventParser parser = new DecisionEventParser();
        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, DecisionEvent> events = builder.stream(this.inputTopic, Consumed.with(Serdes.String(), Serdes.ByteArray())
                        // The hour is the record timestamp, which the gateway sets to the event time. A record without
                        // a valid one is skipped rather than allowed to stop the stream.
                        .withTimestampExtractor(new LogAndSkipOnInvalidTimestamp())
                        .withName("decision-events"))
                .flatMapValues(value -> parser.parse(value).stream().toList(), Named.as("parse-decision-events"))
                .filter(RollupTopology::keyedByItsClient, Named.as("keyed-by-client"));
        events
                // Grouping by the record key, not by the client field, avoids a repartition topic: the gateway already
                // keys every event by its client, so each client's events are in one partition, in order. Without a
                // repartition the events are never serialized, so they need no serde.
                .groupByKey(Grouped.keySerde(Serdes.String()))
                .windowedBy(TimeWindows.ofSizeAndGrace(HOUR, GRACE))
                .aggregate(HourlyUsage::new, (client, event, usage) -> usage.add(event), Named.as("count-hourly-usage"),
                        hourlyUsageStore())
                .toStream(Named.as("hourly-usage-updates"))
                .filter((hour, usage) -> usage != null && usage.denied() > 0, Named.as("denied-at-least-once"))
                .map(RollupTopology::toRollupRecord, Named.as("to-rollup-record"))
                .to(this.outputTopic, Produced.with(Serdes.String(), Serdes.String()).withName("usage-rollup"));
        if (this.abuseScoring != null) {
            scoreConduct(events, this.abuseScoring);
        }
        return builder.build();
    }

    /**
     * Per client and scoring window, the conduct so far and its score ({@link AbuseScoring}); each update whose score
     * is worth publishing goes to the score topic, keyed by the client (compacted: the latest score per client). The
     * record cache, flushed every commit interval, keeps a busy client from writing a score per event.
     */
    private static void scoreConduct(KStream<String, DecisionEvent> events, AbuseScoring scoring) {
        events.groupByKey(Grouped.<String, DecisionEvent>keySerde(Serdes.String()).withName("by-client-for-scores"))
                .windowedBy(TimeWindows.ofSizeAndGrace(scoring.window(), scoring.window().dividedBy(2)))
                .aggregate(ClientConduct::new, (client, event, conduct) -> conduct.add(event),
                        Named.as("score-conduct"), Materialized.<String, ClientConduct>as(Stores.inMemoryWindowStore(
                                CONDUCT_STORE, scoring.window().multipliedBy(3), scoring.window(), false))
                                .withKeySerde(Serdes.String()).withValueSerde(ClientConduct.serde()))
                .toStream(Named.as("conduct-updates"))
                .filter((window, conduct) -> conduct != null
                        && scoring.score(conduct) >= AbuseScoring.MIN_PUBLISHED, Named.as("worth-publishing"))
                .map((window, conduct) -> KeyValue.pair(window.key(), scoreRecord(window, scoring.score(conduct))),
                        Named.as("to-score-record"))
                .to(scoring.topic(), Produced.with(Serdes.String(), Serdes.String()).withName("abuse-scores"));
    }

    /** The gateways' record format ({@code AbuseScoreJson}); published at the window's end, or now if sooner. */
    static String scoreRecord(Windowed<String> window, double score) {
        long at = Math.min(window.window().end(), System.currentTimeMillis());
        return "{\"score\":" + Math.round(score * 1000) / 1000.0 + ",\"source\":\"rollup\",\"at\":" + at + "}";
    }

    /**
     * In memory rather than RocksDB: an hour of per-client totals is small, the changelog topic restores it after a
     * restart, and no native library has to load wherever the jar runs.
     */
    private static Materialized<String, HourlyUsage, WindowStore<Bytes, byte[]>> hourlyUsageStore() {
        return Materialized.<String, HourlyUsage>as(Stores.inMemoryWindowStore(STORE_NAME, RETENTION, HOUR, false))
                .withKeySerde(Serdes.String())
                .withValueSerde(new HourlyUsageSerde());
    }

    /**
     * Totals are kept under the record key, so a record whose key is not its client would be counted for the wrong
     * client. The gateway never writes one; anything else that does is left out rather than miscounted.
     */
    private static boolean keyedByItsClient(String key, DecisionEvent event) {
        if (event.client().equals(key)) {
            return true;
        }
        log.debug("Skipping a decision event keyed {} for client {}", key, event.client());
        return false;
    }

    private static KeyValue<String, String> toRollupRecord(Windowed<String> hour, HourlyUsage usage) {
        String client = hour.key();
        Instant hourStart = hour.window().startTime();
        return KeyValue.pair(UsageRollupRecord.key(client, hourStart),
                UsageRollupRecord.value(client, hourStart, usage));
    }
}

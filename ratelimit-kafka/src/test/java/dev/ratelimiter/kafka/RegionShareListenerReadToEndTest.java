package dev.ratelimiter.kafka;

import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSetHolder;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import static dev.ratelimiter.kafka.RegionShareListenerTest.BUCKET;
import static dev.ratelimiter.kafka.RegionShareListenerTest.GLOBAL;
import static dev.ratelimiter.kafka.RegionShareListenerTest.NOW;
import static dev.ratelimiter.kafka.RegionShareListenerTest.REGIONS;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * What the region shares health details say at start-up (issue 36: {@code readingShares} read backwards), on the
 * listener's own thread against a mock consumer: {@code sharesReadToEnd} is true only once the topic has been read to
 * where it ended; {@code sharesHeldToFloor} is true until then, or until the topic is found missing or
 * {@code stale-after} passes; the deprecated {@code readingShares} keeps its old meaning for one release.
 */
class RegionShareListenerReadToEndTest {

    private static final String TOPIC = "shares";
    private static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);

    private final RegionShares shares = new RegionShares("us-east-1", Map.of("us-east-1", 1.0, "eu-central-1", 1.0,
            "ap-southeast-1", 1.0), 20);
    private final RuleSetHolder rules = new RuleSetHolder(RuleSet.builder("free").rule(GLOBAL).build());
    private final MockConsumer<String, String> consumer = new MockConsumer<>("earliest");

    @Test
    void readToEndOnceTheTopicIsReadToWhereItEndedAndNotBefore() {
        onePartition(1);
        consumer.schedulePollTask(() -> consumer.addRecord(new ConsumerRecord<>(TOPIC, 0, 0,
                RegionShares.shareKey(BUCKET), "{\"rule\":\"api\",\"regions\":\"" + REGIONS + "\",\"quota\":1000,"
                        + "\"shares\":{\"ap-southeast-1\":50,\"eu-central-1\":50,\"us-east-1\":900},\"version\":3,"
                        + "\"at\":0}")));
        try (RegionShareListener listener = listener(Duration.ofMinutes(5))) {
            assertThat(listener.readToEnd()).as("before the topic is read").isFalse();
            assertThat(listener.heldToFloor()).isTrue();
            listener.start();
            await(listener::readToEnd, "the topic read to its end");
            assertThat(listener.heldToFloor()).isFalse();
            assertThat(shares.ruleFor(GLOBAL, BUCKET).limit().quota()).as("the published share").isEqualTo(900);
            assertThat(deprecatedReading(listener)).as("readingShares, true here too").isTrue();
        }
    }

    @Test
    void aTopicThatCannotBeReadWithinStaleAfterLiftsTheFloorButIsNotReadToEnd() {
        onePartition(5); // five records announced, none ever delivered: it never catches up
        try (RegionShareListener listener = listener(Duration.ofMillis(1))) {
            listener.start();
            await(() -> !listener.heldToFloor(), "the floor lifted after stale-after");
            assertThat(listener.readToEnd()).as("gave up: the shares in force are the default split").isFalse();
            await(() -> deprecatedReading(listener), "readingShares true once assigned");
            assertThat(listener.readToEnd()).as("the old detail said true here: the confusion it had").isFalse();
        }
    }

    @Test
    void aMissingTopicMeansTheDefaultSplitWithoutHavingReadAnything() {
        try (RegionShareListener listener = listener(Duration.ofMinutes(5))) {
            listener.start();
            await(() -> !listener.heldToFloor(), "the floor lifted: no topic, no shares were published");
            assertThat(listener.readToEnd()).isFalse();
            assertThat(deprecatedReading(listener)).isFalse();
            assertThat(shares.ruleFor(GLOBAL, BUCKET).limit().quota()).as("the default split").isEqualTo(333);
        }
    }

    private void onePartition(long endOffset) {
        consumer.updatePartitions(TOPIC, List.of(new PartitionInfo(TOPIC, 0, null, null, null)));
        consumer.updateBeginningOffsets(Map.of(PARTITION, 0L));
        consumer.updateEndOffsets(Map.of(PARTITION, endOffset));
    }

    private RegionShareListener listener(Duration staleAfter) {
        return new RegionShareListener(() -> consumer, TOPIC, shares, rules, 0.05, staleAfter,
                Clock.fixed(NOW, ZoneOffset.UTC));
    }

    @SuppressWarnings("removal")
    private static boolean deprecatedReading(RegionShareListener listener) {
        return listener.reading();
    }

    /** Waits for the listener's thread to get there (no timing asserted: the bound only ends a test that hangs). */
    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("never got to: " + what);
            }
            try {
                Thread.sleep(10);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                fail("interrupted waiting for: " + what);
            }
        }
    }
}

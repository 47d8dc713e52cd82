package dev.ratelimiter.rebalancer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rebalancer's topology driven by hand: usage in, shares out, the wall clock advanced one interval at a time.
 * A limit of 1,000 a minute over regions a, b, c (default split 334, 333, 333), floor 5 % (50), interval 1s, grow
 * delay 2s.
 */
class RebalancerTopologyTest {

    private static final String BUCKET = "AAAAAAAAAAAAAAAAAAAAAA/api@t";

    private static final String REGIONS = "a=1.0,b=1.0,c=1.0";

    /** The share each region's gateways enforce: what the last record published gave them (applied at once). */
    private final Map<String, Long> enforced = new java.util.HashMap<>();

    private final RebalancerSettings settings = new RebalancerSettings("unused:9092", "usage", "shares",
            "rebalancer-test", null, Map.of("a", 1.0, "b", 1.0, "c", 1.0), 0.05, 0.2, Duration.ofSeconds(1),
            Duration.ofSeconds(2), Duration.ofSeconds(10), Duration.ofSeconds(5), Duration.ofSeconds(60));

    private TopologyTestDriver driver;
    private TestInputTopic<String, String> usage;
    private TestOutputTopic<String, String> shares;

    @BeforeEach
    void start() {
        Properties properties = settings.streamsProperties();
        driver = new TopologyTestDriver(new RebalancerTopology(settings).build(), properties, Instant.EPOCH);
        usage = driver.createInputTopic("usage", new StringSerializer(), new StringSerializer());
        shares = driver.createOutputTopic("shares", new StringDeserializer(), new StringDeserializer());
    }

    @AfterEach
    void stop() {
        driver.close();
    }

    @Test
    void aRegionRefusingAtTwiceTheLimitGetsTheLimitLessTheOtherFloorsShrinkingFirst() {
        List<long[]> published = runHot("a", 8);
        assertThat(published.get(0)).as("the others shrink first").containsExactly(334, 50, 50);
        assertThat(published.get(published.size() - 1)).as("then a grows").containsExactly(900, 50, 50);
        assertInFlightWithinLimit(published);
    }

    @Test
    void theShareFollowsTrafficThatMovesToAnotherRegion() {
        runHot("a", 6);
        List<long[]> published = new ArrayList<>();
        for (int tick = 0; tick < 8; tick++) {
            report("a", "a-1", 0, 0);
            report("b", "b-1", 6, 28);
            published.addAll(tick());
        }
        assertThat(published.get(0)).as("a shrinks before b grows").containsExactly(50, 50, 50);
        assertThat(published.get(published.size() - 1)).containsExactly(50, 900, 50);
        assertInFlightWithinLimit(published);
    }

    @Test
    void aRegionStillEnforcingItsLargerShareHoldsBackTheGrowOfAnother() {
        runHot("a", 6);
        List<long[]> published = new ArrayList<>();
        for (int tick = 0; tick < 8; tick++) {
            enforced.put("a", 900L); // a's gateways never apply the shrink (a lagging mirror)
            report("a", "a-1", 1, 0);
            report("b", "b-1", 6, 28);
            published.addAll(tick());
        }
        assertThat(published).as("the shrink only").isNotEmpty().allSatisfy(shares -> assertThat(shares[1])
                .isLessThanOrEqualTo(50));
    }

    @Test
    void aRegionThatFallsSilentWithTrafficHoldsTheShares() {
        runHot("a", 6);
        List<long[]> published = new ArrayList<>();
        for (int tick = 0; tick < 8; tick++) {
            report("b", "b-1", 6, 28); // a sends nothing at all: its Kafka is down, its traffic may go on
            published.addAll(tick());
        }
        // a may be shrunk (its last report still counts until REPORT_TTL), but b never grows into what a may still
        // be enforcing: no report from a says it applied the shrink.
        assertThat(published).allSatisfy(shares -> assertThat(shares[1]).isLessThanOrEqualTo(50));
    }

    @Test
    void evenTrafficNeedsNoMoveAndPublishesNothing() {
        for (int tick = 0; tick < 6; tick++) {
            for (String region : List.of("a", "b", "c")) {
                report(region, region + "-1", 5, 6); // 660 a minute each: twice the limit, spread evenly
            }
            assertThat(tick()).isEmpty();
        }
    }

    @Test
    void evenTrafficThatVariesByARequestOrTwoPerIntervalMovesNothing() {
        java.util.Random random = new java.util.Random(19);
        for (int tick = 0; tick < 20; tick++) {
            for (String region : List.of("a", "b", "c")) {
                // 600 or 660 a minute each, twice the limit spread evenly, measured 10 or 11 in a second
                report(region, region + "-1", 5, 5 + random.nextInt(2));
            }
            assertThat(tick()).as("tick %d", tick).isEmpty();
        }
    }

    @Test
    void aRecordLeftByEarlierTrafficFollowsTheTargetEvenWhenTheMoveIsSmall() {
        // a at 420 a minute, b and c at 300: the wants (504, 360, 360) do not fit, a grows well past its default.
        long[] first = settings.allocator().allocate(1000, new double[] { 420, 300, 300 });
        List<long[]> published = runAt(7, 5, 5);
        assertThat(published.get(published.size() - 1)).containsExactly(first);
        // Then a at 360 a minute: the new target moves no share by more than the deadband (50)...
        long[] second = settings.allocator().allocate(1000, new double[] { 360, 300, 300 });
        for (int i = 0; i < 3; i++) {
            assertThat(Math.abs(second[i] - first[i])).as("the move at %d", i).isPositive().isLessThanOrEqualTo(50);
        }
        // ...but a would keep quota it does not use while b and c refuse: the move is made.
        List<long[]> moved = runAt(6, 5, 5);
        assertThat(moved).as("the shrink, then the grow").hasSizeGreaterThanOrEqualTo(2);
        assertThat(moved.get(moved.size() - 1)).containsExactly(second);
        published.addAll(moved);
        assertInFlightWithinLimit(published);
    }

    /** Eight intervals of a, b and c each reporting the requests a second given (admitted and refused). */
    private List<long[]> runAt(long a, long b, long c) {
        List<long[]> published = new ArrayList<>();
        for (int tick = 0; tick < 8; tick++) {
            report("a", "a-1", a, 0);
            report("b", "b-1", b, 0);
            report("c", "c-1", c, 0);
            published.addAll(tick());
        }
        return published;
    }

    @Test
    void anIdleBucketGoesBackToTheDefaultSplitAndLeavesTheTopicAsATombstone() {
        runHot("a", 6);
        report("a", "a-1", 0, 0); // what a gateway says once when a bucket's traffic stops, then nothing
        List<KeyValue<String, String>> records = new ArrayList<>();
        for (int tick = 0; tick < 16; tick++) {
            driver.advanceWallClockTime(Duration.ofSeconds(1));
            shares.readKeyValuesToList().stream().filter(r -> !r.key.equals(RebalancerTopology.HEARTBEAT))
                    .forEach(records::add);
        }
        assertThat(records).isNotEmpty();
        assertThat(records.get(records.size() - 1).value).as("a tombstone: the default split").isNull();
        assertThat(driver.<String, String>getKeyValueStore(RebalanceProcessor.STORE).approximateNumEntries())
                .isZero();
    }

    @Test
    void aBucketWhoseTrafficVanishedWithoutAWordStaysShrunkRatherThanGrowIntoWhatMayStillBeEnforced() {
        runHot("a", 6);
        List<long[]> published = new ArrayList<>();
        for (int tick = 0; tick < 16; tick++) {
            published.addAll(tick()); // a silent while it had traffic: lost contact, its 900 may still be in force
        }
        assertThat(published).isNotEmpty().allSatisfy(shares -> {
            assertThat(shares[1]).isLessThanOrEqualTo(50);
            assertThat(shares[2]).isLessThanOrEqualTo(50);
        });
    }

    @Test
    void unusableUsageIsSkippedAndChangesNothing() {
        usage.pipeInput(BUCKET, "not json");
        usage.pipeInput(BUCKET, record("elsewhere", "x-1", 10, 100));
        usage.pipeInput(BUCKET, "{\"region\":\"a\",\"regions\":\"" + REGIONS + "\",\"quota\":1000,\"windowMs\":60000,"
                + "\"intervalMs\":1000,\"admitted\":-5,\"refused\":100}");
        usage.pipeInput(BUCKET, record("a", "a-1", 10, 100).replace(REGIONS, "a=1.0,b=1.0,c=2.0"));
        usage.pipeInput("no-slash", record("a", "a-1", 10, 100));
        usage.pipeInput("junk/not a bucket", record("a", "a-1", 10, 100));
        usage.pipeInput(BUCKET, (String) null);
        assertThat(tick()).isEmpty();
    }

    @Test
    void aChangedLimitStartsOverFromTheDefaultSplitOfTheNewLimit() {
        runHot("a", 6);
        usage.pipeInput(BUCKET, "{\"region\":\"a\",\"instance\":\"a-1\",\"regions\":\"" + REGIONS + "\",\"rule\":"
                + "\"api\",\"quota\":600,\"windowMs\":60000,\"intervalMs\":1000,\"admitted\":1,\"refused\":0}");
        List<KeyValue<String, String>> records = shares.readKeyValuesToList();
        // Gateways still on the old limit must not grow: its record shrinks to the old default split at most, and
        // those on the new limit ignore it (another limit).
        assertThat(records).singleElement().satisfies(record -> {
            JsonNode value = Json.MAPPER.readTree(record.value);
            assertThat(value.path("quota").asLong()).isEqualTo(1000);
            assertThat(value.path("shares").path("a").asLong()).isEqualTo(334);
            assertThat(value.path("shares").path("b").asLong()).isEqualTo(50);
        });
    }

    @Test
    void theHeartbeatGoesOutEveryInterval() {
        driver.advanceWallClockTime(Duration.ofSeconds(1));
        driver.advanceWallClockTime(Duration.ofSeconds(1));
        List<KeyValue<String, String>> records = shares.readKeyValuesToList();
        assertThat(records).extracting(r -> r.key).containsExactly(RebalancerTopology.HEARTBEAT,
                RebalancerTopology.HEARTBEAT);
        assertThat(Json.MAPPER.readTree(records.get(1).value).path("heartbeat").asLong()).isEqualTo(2_000);
    }

    /** {@code region} at 2,040 a minute (34 a second), the other regions silent, for {@code ticks} intervals. */
    private List<long[]> runHot(String region, int ticks) {
        List<long[]> published = new ArrayList<>();
        for (int tick = 0; tick < ticks; tick++) {
            report(region, region + "-1", 6, 28);
            published.addAll(tick());
        }
        return published;
    }

    private void report(String region, String instance, long admitted, long refused) {
        usage.pipeInput(BUCKET, record(region, instance, admitted, refused));
    }

    private String record(String region, String instance, long admitted, long refused) {
        return "{\"region\":\"" + region + "\",\"instance\":\"" + instance + "\",\"regions\":\"" + REGIONS
                + "\",\"rule\":\"api\",\"bucket\":\"" + BUCKET + "\",\"quota\":1000,\"windowMs\":60000,\"share\":"
                + enforced.getOrDefault(region, region.equals("a") ? 334L : 333L) + ",\"admitted\":" + admitted + ",\"refused\":" + refused
                + ",\"intervalMs\":1000,\"at\":0}";
    }

    /** One interval: the shares published in it (heartbeats left out), region by region. */
    private List<long[]> tick() {
        driver.advanceWallClockTime(Duration.ofSeconds(1));
        List<long[]> published = new ArrayList<>();
        for (KeyValue<String, String> record : shares.readKeyValuesToList()) {
            if (record.key.equals(RebalancerTopology.HEARTBEAT)) {
                continue;
            }
            if (record.value == null) {
                enforced.clear(); // a tombstone: the default split
                continue;
            }
            assertThat(record.key).isEqualTo(BUCKET);
            JsonNode value = Json.MAPPER.readTree(record.value);
            assertThat(value.path("quota").asLong()).isEqualTo(1000);
            JsonNode byRegion = value.path("shares");
            assertThat(value.path("regions").asString()).isEqualTo(REGIONS);
            published.add(new long[] { byRegion.path("a").asLong(), byRegion.path("b").asLong(),
                    byRegion.path("c").asLong() });
            List.of("a", "b", "c").forEach(region -> enforced.put(region, byRegion.path(region).asLong()));
        }
        return published;
    }

    /** Starting from the default split, no region's share and the next one's together exceed the limit. */
    private static void assertInFlightWithinLimit(List<long[]> published) {
        long[] before = { 334, 333, 333 };
        for (long[] next : published) {
            long together = 0;
            for (int i = 0; i < 3; i++) {
                together += Math.max(before[i], next[i]);
            }
            assertThat(together).isLessThanOrEqualTo(1000);
            before = next;
        }
    }
}

package dev.ratelimiter.kafka;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.RuleSetHolder;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.TokenBucketLimit;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Records of the shares topic as a region applies them: good ones move its share, and nothing a record says — junk,
 * negative numbers, shares summing above the limit — can raise a region above its share.
 */
class RegionShareListenerTest {

    static final Instant NOW = Instant.parse("2026-12-02T00:00:00Z");
    static final BucketKey BUCKET = new BucketKey("AAAAAAAAAAAAAAAAAAAAAA", "api@t");
    static final Rule GLOBAL = new Rule("api", "api", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("t.", 1_000, 1_000, Duration.ofMinutes(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
            StoreMode.EXACT, 1, null, Scope.GLOBAL);

    final RegionShares shares = new RegionShares("us-east-1", java.util.Map.of("us-east-1", 1.0, "eu-central-1", 1.0,
            "ap-southeast-1", 1.0), 20);
    final RuleSetHolder rules = new RuleSetHolder(RuleSet.builder("free").rule(GLOBAL).build());
    final RegionShareListener listener = new RegionShareListener(() -> new MockConsumer<>("earliest"), "shares",
            shares, rules, 0.05, Duration.ofSeconds(30), Clock.fixed(NOW, ZoneOffset.UTC));

    static final String REGIONS = "ap-southeast-1=1.0,eu-central-1=1.0,us-east-1=1.0";

    @Test
    void untilTheTopicIsReadABucketHoldsOnlyTheFloor() {
        assertThat(shares.awaitingShares()).isTrue();
        assertThat(share()).as("5 % of 1,000: the least the rebalancer ever leaves a region").isEqualTo(50);
        shares.sharesRead();
        assertThat(share()).isEqualTo(333);
    }

    @Test
    void aShareRecordMovesThisRegionsShareAndATombstoneMovesItBack() {
        shares.sharesRead();
        listener.apply(key(), "{\"rule\":\"api\",\"regions\":\"" + REGIONS + "\",\"quota\":1000,\"shares\":{"
                + "\"ap-southeast-1\":50,\"eu-central-1\":50,\"us-east-1\":900},\"version\":3,\"at\":0}");
        assertThat(share()).isEqualTo(900);
        listener.apply(key(), null);
        assertThat(share()).isEqualTo(333);
        assertThat(listener.applied()).isEqualTo(2);
        assertThat(listener.refused()).isZero();
    }

    @Test
    void recordsThatCannotBeTrustedAreSkippedAndTheShareInForceStays() {
        shares.sharesRead();
        listener.apply(key(), record(600, 300, 50));
        assertThat(share()).isEqualTo(600);
        long max = Long.MAX_VALUE;
        List<String> bad = List.of("not json", record(1000, 50, 1), record(1000, 0, 0), record(900, 50, -1),
                "{\"regions\":\"" + REGIONS + "\",\"quota\":1000,\"shares\":{\"us-east-1\":1000}}",
                record(max, max, 1),
                record(700, 200, 50).replace("\"quota\":1000", "\"quota\":0"),
                record(700, 200, 50).replace("700", "\"lots\""), record(700, 200, 50).replace("700", "700.5"),
                "[]", record(700, 200, 50).replace("\"quota\":1000", "\"quota\":1e400"),
                record(700, 200, 50).replace("700", "99999999999999999999999"));
        for (String record : bad) {
            listener.apply(key(), record);
            assertThat(share()).as("after %s", record).isEqualTo(600);
        }
        listener.apply(null, record(998, 1, 1));
        assertThat(share()).isEqualTo(600);
        assertThat(listener.refused()).isEqualTo(bad.size() + 1);
    }

    @Test
    void sharesMadeUnderOtherWeightsNeverRaiseThisRegionAboveItsDefaultSplit() {
        shares.sharesRead();
        listener.apply(key(), record(700, 200, 50).replace(REGIONS, "ap-southeast-1=1.0,eu-central-1=1.0,"
                + "us-east-1=2.0"));
        assertThat(share()).as("min(700, the default 333)").isEqualTo(333);
        listener.apply(key(), record(100, 700, 200).replace(REGIONS, "ap-southeast-1=1.0,eu-central-1=1.0,"
                + "us-east-1=2.0"));
        assertThat(share()).as("a shrink still applies").isEqualTo(100);
        assertThat(listener.mismatched()).isEqualTo(2);
    }

    @Test
    void aRecordPublishedBeforeTheOneInForceIsAReplayAndIgnored() {
        shares.sharesRead();
        listener.apply(key(), record(50, 900, 50).replace("}}", "},\"at\":2000}"));
        listener.apply(key(), record(900, 50, 50).replace("}}", "},\"at\":1000}"));
        assertThat(share()).isEqualTo(50);
        listener.apply(key(), record(600, 300, 100).replace("}}", "},\"at\":3000}"));
        assertThat(share()).isEqualTo(600);
    }

    @Test
    void aRecordStampedFarInTheFutureIsRefusedAndCannotHoldOffTheRebalancersRecords() {
        shares.sharesRead();
        listener.apply(key(), record(900, 50, 50).replace("}}", "},\"at\":" + Long.MAX_VALUE + "}"));
        listener.apply(key(), record(900, 50, 50).replace("}}", "},\"at\":"
                + NOW.plus(RegionShareListener.MAX_CLOCK_SKEW).plusMillis(1).toEpochMilli() + "}"));
        assertThat(share()).as("neither applied").isEqualTo(333);
        assertThat(listener.refused()).isEqualTo(2);
        long honest = NOW.toEpochMilli();
        listener.apply(key(), record(600, 300, 100).replace("}}", "},\"at\":" + honest + "}"));
        assertThat(share()).isEqualTo(600);
        listener.apply(key(), record(100, 800, 100).replace("}}", "},\"at\":"
                + NOW.plus(RegionShareListener.MAX_CLOCK_SKEW).toEpochMilli() + "}"));
        assertThat(share()).as("a stamp within the skew a clock may have is applied").isEqualTo(100);
    }

    @Test
    void aRecordForABucketNoRuleCouldMakeIsRefused() {
        shares.sharesRead();
        for (String key : List.of("junk", "AAAAAAAAAAAAAAAAAAAAAA/", "/api@t", "AAAAAAAAAAAAAAAAAAAAAA/api",
                "AAAAAAAAAAAAAAAAAAAAAA/api@t:short", "AAAAAAAAAAAAAAAAAAAAAA/-api@t", "x".repeat(10_000))) {
            listener.apply(key, record(998, 1, 1));
        }
        assertThat(listener.refused()).isEqualTo(7);
        assertThat(shares.moved()).isZero();
    }

    @Test
    void recordsOfBucketsNoRuleHereMakesYetWaitAmongFewerAndNeverPushOutTheRulesInForce() {
        shares.sharesRead();
        listener.apply(key(), record(900, 50, 50));
        // a flood of forged records for buckets of a rule this region does not have: at most a tenth of max-keys kept
        for (int i = 0; i < 1_000; i++) {
            listener.apply(String.format("%022d/forged@t", i), record(998, 1, 1));
        }
        assertThat(shares.moved()).as("the one in force and 2 (20 / 10) waiting").isEqualTo(3);
        assertThat(shares.evicted()).isEqualTo(998);
        assertThat(share()).as("the share of the rule in force stays").isEqualTo(900);
        // records of the rule in force for other clients: at most max-keys, the oldest going back to its default
        for (int i = 0; i < 20; i++) {
            listener.apply(String.format("%022d/api@t", i), record(998, 1, 1));
        }
        assertThat(shares.moved()).isEqualTo(22);
        assertThat(share()).as("the oldest record in force gave way").isEqualTo(333);
    }

    @Test
    void aRecordOfALimitStillOnItsWayHereAppliesOnceTheRuleHasIt() {
        shares.sharesRead();
        listener.apply(key(), record(900, 50, 50).replace("\"quota\":1000", "\"quota\":2000"));
        assertThat(share()).as("the rule here still has 1,000: the default split").isEqualTo(333);
        Rule doubled = GLOBAL.withLimit(TokenBucketLimit.of("t.", 2_000, 2_000, Duration.ofMinutes(1)));
        rules.replace(RuleSet.builder("free").rule(doubled).build());
        assertThat(shares.ruleFor(doubled, BUCKET).limit().quota()).as("the record waited for it").isEqualTo(900);
        assertThat(listener.refused()).isZero();
    }

    @Test
    void onlyAFreshHeartbeatCountsAsHearingFromTheRebalancer() {
        listener.apply(RegionShareListener.HEARTBEAT, "{\"heartbeat\":" + NOW.minusSeconds(60).toEpochMilli() + "}");
        assertThat(shares.lastHeard()).as("read back from the topic's beginning").isNull();
        listener.apply(RegionShareListener.HEARTBEAT, "{\"heartbeat\":" + NOW.minusSeconds(1).toEpochMilli() + "}");
        assertThat(shares.lastHeard()).isEqualTo(NOW);
    }

    /** A record of shares for us-east-1, eu-central-1 and ap-southeast-1 of a limit of 1,000. */
    private static String record(long us, long eu, long ap) {
        return "{\"rule\":\"api\",\"regions\":\"" + REGIONS + "\",\"quota\":1000,\"shares\":{\"us-east-1\":" + us
                + ",\"eu-central-1\":" + eu + ",\"ap-southeast-1\":" + ap + "}}";
    }

    private static String key() {
        return RegionShares.shareKey(BUCKET);
    }

    private long share() {
        return shares.ruleFor(GLOBAL, BUCKET).limit().quota();
    }
}

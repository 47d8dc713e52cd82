package dev.ratelimiter.kafka;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

import dev.ratelimiter.core.BucketKey;
import dev.ratelimiter.core.Check;
import dev.ratelimiter.core.Dimension;
import dev.ratelimiter.core.FailureMode;
import dev.ratelimiter.core.Match;
import dev.ratelimiter.core.Mode;
import dev.ratelimiter.core.RegionShares;
import dev.ratelimiter.core.RegionUsage;
import dev.ratelimiter.core.RequestAttributes;
import dev.ratelimiter.core.Rule;
import dev.ratelimiter.core.RuleOutcome;
import dev.ratelimiter.core.RuleSet;
import dev.ratelimiter.core.Scope;
import dev.ratelimiter.core.StoreMode;
import dev.ratelimiter.core.TokenBucketLimit;
import dev.ratelimiter.core.Verdict;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The usage records a region sends the rebalancer: one per bucket, keyed by its share key, zeros when leaving. */
class RegionUsagePublisherTest {

    private static final Rule GLOBAL = new Rule("api", "api", Match.ANY, List.of(Dimension.API_KEY),
            TokenBucketLimit.of("t.", 900, 900, Duration.ofMinutes(1)), 0, Mode.ENFORCE, FailureMode.LOCAL,
            StoreMode.EXACT, 1, null, Scope.GLOBAL);
    private static final BucketKey BUCKET = new BucketKey("p1", "api@t");
    private static final RequestAttributes REQUEST = new RequestAttributes("acme", null, null, null, "api", "/x",
            "default", "free", 1);

    private final RegionShares shares = new RegionShares("us-east-1", Map.of("us-east-1", 1.0, "eu-central-1", 2.0));
    private final RegionUsage usage = new RegionUsage(() -> RuleSet.builder("free").rule(GLOBAL).build(), shares, 10);
    private final MockProducer<String, String> producer = new MockProducer<>(true, null, new StringSerializer(),
            new StringSerializer());
    private final RegionUsagePublisher publisher = new RegionUsagePublisher(usage, () -> producer, "usage",
            new RegionUsagePublisher.Reporter("us-east-1", "gw-1", shares.fingerprint(), "hmac"),
            Duration.ofSeconds(5), Clock.fixed(Instant.ofEpochMilli(5_000), ZoneOffset.UTC));

    @Test
    void eachBucketsUsageGoesOutKeyedByItsShareKeyAndLeavingSaysZeros() {
        // The request was checked against this region's share of the rule (a third of 900, by weight).
        Rule share = shares.ruleFor(GLOBAL, BUCKET);
        usage.onVerdict(REQUEST, Verdict.evaluated(List.of(new RuleOutcome(new Check(share, BUCKET, 4, false), true,
                0, Duration.ZERO, Duration.ZERO)), Verdict.Source.STORE));

        publisher.publish();
        publisher.close();

        assertThat(producer.history()).extracting(ProducerRecord::topic, ProducerRecord::key,
                ProducerRecord::timestamp).containsOnly(org.assertj.core.groups.Tuple.tuple("usage", "p1/api@t",
                        5_000L));
        assertThat(producer.history()).extracting(ProducerRecord::value).containsExactly(
                "{\"region\":\"us-east-1\",\"instance\":\"gw-1\",\"regions\":\"eu-central-1=2.0,us-east-1=1.0\","
                        + "\"ids\":\"hmac\",\"rule\":\"api\",\"bucket\":\"p1/api@t\",\"quota\":900,\"windowMs\":60000,"
                        + "\"share\":300,\"admitted\":4,\"refused\":0,\"quiet\":false,\"intervalMs\":1,\"at\":5000}",
                "{\"region\":\"us-east-1\",\"instance\":\"gw-1\",\"regions\":\"eu-central-1=2.0,us-east-1=1.0\","
                        + "\"ids\":\"hmac\",\"rule\":\"api\",\"bucket\":\"p1/api@t\",\"quota\":900,\"windowMs\":60000,"
                        + "\"share\":300,\"admitted\":0,\"refused\":0,\"quiet\":false,\"intervalMs\":1,\"at\":5000}");
        assertThat(publisher.sent()).isEqualTo(1);
        assertThat(producer.closed()).isTrue();
    }
}
